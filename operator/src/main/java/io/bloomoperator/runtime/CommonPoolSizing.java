package io.bloomoperator.runtime;

import java.util.OptionalInt;

/**
 * Gives the JVM's common ForkJoinPool at least two threads, so that {@code CompletableFuture}'s
 * default executor reuses threads.
 *
 * <p>Why: with fewer than 3 CPUs (a 2-core machine, or a pod limited to 2 CPUs or less) the common
 * pool's parallelism is 1, and then {@code CompletableFuture} runs every {@code *Async} step that
 * names no executor on a new thread. The JDK's own HttpClient takes such a step for each {@code
 * sendAsync} (it completes the response on the default executor; a JFR recording of the operator
 * showed every new {@code Thread-N} started there), and the Kubernetes client sends every request
 * that way: the soak measured ~65 new threads a second. No client option reaches that executor;
 * only the pool's size does, and it is read once, when the pool is first used.
 */
public final class CommonPoolSizing {

  /** The system property the JDK reads for the common pool's parallelism. */
  public static final String PARALLELISM_PROPERTY =
      "java.util.concurrent.ForkJoinPool.common.parallelism";

  /** The smallest parallelism at which CompletableFuture uses the pool rather than new threads. */
  static final int MIN_PARALLELISM = 2;

  private CommonPoolSizing() {}

  /**
   * Sets {@link #PARALLELISM_PROPERTY} when the user has not and the default would be too small.
   * Must run before anything uses ForkJoinPool or CompletableFuture (first thing in main).
   */
  public static void apply() {
    parallelismToSet(
            System.getProperty(PARALLELISM_PROPERTY), Runtime.getRuntime().availableProcessors())
        .ifPresent(p -> System.setProperty(PARALLELISM_PROPERTY, Integer.toString(p)));
  }

  /**
   * The parallelism to set, if any: none when the user chose one; otherwise {@link
   * #MIN_PARALLELISM} when the JDK's default ({@code processors - 1}) is below it.
   */
  static OptionalInt parallelismToSet(String userValue, int processors) {
    if (userValue != null) {
      return OptionalInt.empty();
    }
    return processors - 1 < MIN_PARALLELISM ? OptionalInt.of(MIN_PARALLELISM) : OptionalInt.empty();
  }
}
