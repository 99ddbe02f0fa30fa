package io.bloomoperator.settings;

import static io.bloomoperator.env.EnvNumbers.positive;

import io.bloomoperator.env.EnvDurations;
import java.time.Duration;
import java.util.Map;

/**
 * How much of the operator's shared build capacity one build and one namespace may hold, so that no
 * tenant's source can keep every other tenant's filters from building (enforced by {@code
 * BuildSlots} and {@code BuildGuard} in the reconciler). Set by the administrator (environment
 * variables, docs/configuration.md); no BloomFilter field can raise them.
 *
 * @param maxBuildsPerNamespace builds of one namespace in progress at once, from the moment the
 *     source is opened (before its first key) to the end of the publish: each holds one of
 *     java-operator-sdk's reconcile threads, so this bounds the threads one namespace can occupy
 *     ({@code BLOOM_MAX_BUILDS_PER_NAMESPACE})
 * @param sourceStallTimeout longest a build may hold a build slot while its source delivers no key;
 *     then the build is stopped and its slot given back ({@code BLOOM_SOURCE_STALL_TIMEOUT})
 * @param maxBuildTime longest a build may run in total, however steadily its source trickles keys
 *     ({@code BLOOM_MAX_BUILD_TIME})
 * @param threadsPerBuild threads one build hashes keys and sets bits on, its own (which reads the
 *     source) included; the operator's total is this times its build slots ({@code
 *     BLOOM_BUILD_THREADS}, see {@link io.bloomoperator.assemble.BuildWorkers})
 * @param publishWriters chunk writes under way at once across the operator; one namespace gets at
 *     most {@code max(1, this - 1)} of them ({@code BLOOM_PUBLISH_WRITERS}, see {@link
 *     io.bloomoperator.publish.ChunkWriters})
 */
public record BuildLimits(
    int maxBuildsPerNamespace,
    Duration sourceStallTimeout,
    Duration maxBuildTime,
    int threadsPerBuild,
    int publishWriters) {

  /**
   * Eight of java-operator-sdk's 50 reconcile threads (its 5.x default): seven namespaces would
   * have to stall in all their builds at once to take every thread, each only for {@link
   * #DEFAULT_MAX_BUILD_TIME}.
   */
  public static final int DEFAULT_MAX_BUILDS_PER_NAMESPACE = 8;

  /** Far above a healthy source's gap between two keys, short beside any refresh interval. */
  public static final Duration DEFAULT_SOURCE_STALL_TIMEOUT = Duration.ofSeconds(30);

  /** 100M keys from a slow source take a few minutes; 15 minutes is far beyond any seen. */
  public static final Duration DEFAULT_MAX_BUILD_TIME = Duration.ofMinutes(15);

  /** Both cores of a small node; at most 4 on bigger ones unless the administrator says more. */
  public static final int DEFAULT_THREADS_PER_BUILD =
      Math.min(4, Runtime.getRuntime().availableProcessors());

  /**
   * Each chunk write waits for one API server (or object store) round trip, not for a CPU: four
   * overlap those round trips well and still leave the API server to everyone else.
   */
  public static final int DEFAULT_PUBLISH_WRITERS = 4;

  /** Limits with the default threads per build and chunk writers. */
  public BuildLimits(
      int maxBuildsPerNamespace, Duration sourceStallTimeout, Duration maxBuildTime) {
    this(
        maxBuildsPerNamespace,
        sourceStallTimeout,
        maxBuildTime,
        DEFAULT_THREADS_PER_BUILD,
        DEFAULT_PUBLISH_WRITERS);
  }

  public BuildLimits {
    if (threadsPerBuild < 1 || publishWriters < 1) {
      throw new IllegalArgumentException("threads per build and chunk writers must be positive");
    }
    if (maxBuildsPerNamespace < 1
        || sourceStallTimeout == null
        || maxBuildTime == null
        || sourceStallTimeout.isNegative()
        || sourceStallTimeout.isZero()
        || maxBuildTime.isNegative()
        || maxBuildTime.isZero()) {
      throw new IllegalArgumentException("build limits must be positive");
    }
  }

  /** The defaults. */
  public static BuildLimits defaults() {
    return fromEnvironment(Map.of());
  }

  /**
   * Reads BLOOM_MAX_BUILDS_PER_NAMESPACE, BLOOM_SOURCE_STALL_TIMEOUT, BLOOM_MAX_BUILD_TIME,
   * BLOOM_BUILD_THREADS and BLOOM_PUBLISH_WRITERS, falling back to the defaults.
   *
   * @throws IllegalArgumentException naming the variable that is not valid
   */
  public static BuildLimits fromEnvironment(Map<String, String> env) {
    return new BuildLimits(
        (int)
            Math.min(
                Integer.MAX_VALUE,
                positive(env, "BLOOM_MAX_BUILDS_PER_NAMESPACE", DEFAULT_MAX_BUILDS_PER_NAMESPACE)),
        EnvDurations.positive(env, "BLOOM_SOURCE_STALL_TIMEOUT", DEFAULT_SOURCE_STALL_TIMEOUT),
        EnvDurations.positive(env, "BLOOM_MAX_BUILD_TIME", DEFAULT_MAX_BUILD_TIME),
        (int) Math.min(64, positive(env, "BLOOM_BUILD_THREADS", DEFAULT_THREADS_PER_BUILD)),
        (int) Math.min(64, positive(env, "BLOOM_PUBLISH_WRITERS", DEFAULT_PUBLISH_WRITERS)));
  }
}
