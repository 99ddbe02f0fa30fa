package io.bloomoperator.faults;

import io.bloomoperator.api.RebuildRequest;
import io.bloomoperator.reconcile.SnapshotFixtures;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * The filters' ConfigMap sources, rewritten with new keys every interval, each rewrite followed by
 * a rebuild request so the operator publishes without waiting for its refresh interval. Round
 * {@code r} of filter {@code f} holds the window {@code f-(r*t) … f-(r*t+n-1)}: with the default
 * turnover {@code t = n} every round is all new keys; a smaller turnover slides the window by
 * {@code t} keys per round, a change small enough to be published as a delta.
 */
final class ChangingSources {
  private final KubernetesClient client;
  private final String namespace;
  private final List<String> filters;
  private final int keys;
  private final int turnover;
  private final AtomicLong round = new AtomicLong();
  private volatile Thread changer;
  private volatile boolean changing;

  ChangingSources(KubernetesClient client, String namespace, List<String> filters, int keys) {
    this(client, namespace, filters, keys, keys);
  }

  /**
   * @param turnover keys replaced per round (the oldest leave, as many new ones join)
   */
  ChangingSources(
      KubernetesClient client, String namespace, List<String> filters, int keys, int turnover) {
    this.client = client;
    this.namespace = namespace;
    this.filters = filters;
    this.keys = keys;
    this.turnover = turnover;
  }

  static String sourceName(String filter) {
    return filter + "-source";
  }

  List<String> keys(String filter, long round) {
    List<String> list = new ArrayList<>(keys);
    long first = round * turnover;
    for (int i = 0; i < keys; i++) {
      list.add(filter + "-" + (first + i));
    }
    return list;
  }

  /**
   * Creates one BloomFilter per source: 1 KiB chunks (a filter of 20,000 keys is ~24 chunks, so a
   * publish takes a while), previous versions retained for {@code retain}.
   */
  void createFilters(Duration retain) {
    for (String filter : filters) {
      SnapshotFixtures.apply(
          client,
          namespace,
          """
          apiVersion: bloomoperator.io/v1alpha1
          kind: BloomFilter
          metadata: {name: %s}
          spec:
            falsePositiveRate: 0.01
            source: {configMap: {name: %s, key: ids}}
            snapshot: {chunkSizeBytes: 1024, retainPreviousFor: %ds}
          """
              .formatted(filter, sourceName(filter), retain.toSeconds()));
    }
  }

  /** Writes round {@code r} of every source, without asking for a rebuild. */
  void writeSources(long r) {
    round.set(r);
    for (String filter : filters) {
      SnapshotFixtures.sourceConfigMap(
          client, namespace, sourceName(filter), "ids", keys(filter, r));
    }
  }

  /** Writes round {@code r} of every source and asks each filter to rebuild. */
  void write(long r) {
    writeSources(r);
    for (String filter : filters) {
      requestRebuild(filter, r);
    }
  }

  /** Writes round {@code r} of one filter's source and asks that filter to rebuild. */
  void write(String filter, long r) {
    round.accumulateAndGet(r, Math::max);
    SnapshotFixtures.sourceConfigMap(client, namespace, sourceName(filter), "ids", keys(filter, r));
    requestRebuild(filter, r);
  }

  private void requestRebuild(String filter, long r) {
    SnapshotFixtures.mergePatch(
        client,
        namespace,
        filter,
        Map.of("metadata", Map.of("annotations", Map.of(RebuildRequest.ANNOTATION, "r" + r))));
  }

  void startChanging(Duration every) {
    startChanging(every, every, new Random(0));
  }

  /** Writes a new round after each pause, drawn uniformly from {@code [min, max]}. */
  void startChanging(Duration min, Duration max, Random random) {
    Thread thread =
        new Thread(
            () -> {
              while (changing) {
                try {
                  Thread.sleep(
                      min.toMillis() + random.nextLong(max.toMillis() - min.toMillis() + 1));
                  write(round.get() + 1);
                } catch (InterruptedException e) {
                  return;
                } catch (RuntimeException e) {
                  System.out.println("source write failed: " + e.getMessage());
                }
              }
            },
            "source-changer");
    thread.setDaemon(true);
    changing = true;
    changer = thread;
    thread.start();
  }

  /** Stops changing, writes one last round and returns its number. */
  long stopChanging() throws InterruptedException {
    Thread thread = changer;
    changer = null;
    if (thread == null) {
      return round.get();
    }
    changing = false;
    thread.join(30_000);
    write(round.get() + 1);
    return round.get();
  }

  /**
   * The round whose every key {@code mightContain} holds, searching back from {@code latest}: a
   * filter that holds no round completely was built from no content this test ever wrote.
   */
  OptionalLong roundHeldBy(String filter, Predicate<String> mightContain, long latest) {
    for (long r = latest; r >= 0; r--) {
      if (keys(filter, r).stream().allMatch(mightContain)) {
        return OptionalLong.of(r);
      }
    }
    return OptionalLong.empty();
  }

  long round() {
    return round.get();
  }
}
