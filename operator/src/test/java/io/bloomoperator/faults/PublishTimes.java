package io.bloomoperator.faults;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * When each round of each filter's source content was first published: watches the manifests, and
 * for every new manifest decodes the published filter (verifying it, through {@link
 * SnapshotChecker}) and finds the newest round of {@link ChangingSources} whose keys it holds. The
 * time recorded is when the watch event arrived, not when the (queued) decode ran.
 */
final class PublishTimes implements AutoCloseable {
  private final KubernetesClient client;
  private final String namespace;
  private final ChangingSources sources;
  private final SnapshotChecker checker;
  private final Map<String, Map<Long, Long>> firstSeen = new ConcurrentHashMap<>();
  private final ExecutorService decoders =
      Executors.newFixedThreadPool(
          2,
          r -> {
            Thread thread = new Thread(r, "publish-times");
            thread.setDaemon(true);
            return thread;
          });
  private volatile long latestRound;
  private Watch watch;

  PublishTimes(
      KubernetesClient client, String namespace, ChangingSources sources, SnapshotChecker checker) {
    this.client = client;
    this.namespace = namespace;
    this.sources = sources;
    this.checker = checker;
  }

  /** The newest round written so far: decoding searches back from it. */
  void latestRound(long round) {
    latestRound = round;
  }

  void start() {
    watch =
        client
            .configMaps()
            .inNamespace(namespace)
            .withLabel(SnapshotNames.LABEL_ROLE, SnapshotNames.ROLE_MANIFEST)
            .watch(
                new Watcher<>() {
                  @Override
                  public void eventReceived(Action action, ConfigMap manifest) {
                    if (action == Action.ADDED || action == Action.MODIFIED) {
                      long seen = System.nanoTime();
                      decoders.execute(() -> record(manifest, seen));
                    }
                  }

                  @Override
                  public void onClose(WatcherException cause) {
                    System.out.println("publish-times: manifest watch closed: " + cause);
                  }
                });
  }

  private void record(ConfigMap manifest, long seen) {
    String filter = manifest.getMetadata().getLabels().get(SnapshotNames.LABEL_FILTER);
    checker.check(manifest, seen, false);
    BloomFilterBits bits;
    try {
      bits =
          SnapshotDecoder.decode(
              SnapshotConfigMaps.readManifest(manifest).manifest(),
              SnapshotConfigMaps.chunkSource(client, namespace));
    } catch (SnapshotVerificationException | IOException | KubernetesClientException e) {
      return; // superseded and retired meanwhile, or a violation the checker has counted
    }
    OptionalLong round = sources.roundHeldBy(filter, bits::mightContainString, latestRound);
    if (round.isPresent()) {
      firstSeen
          .computeIfAbsent(filter, f -> new ConcurrentHashMap<>())
          .merge(round.getAsLong(), seen, Math::min);
    }
  }

  /** When {@code round} of {@code filter} was first seen published (nanoTime), if it was. */
  Long publishedAt(String filter, long round) {
    Map<Long, Long> rounds = firstSeen.get(filter);
    return rounds == null ? null : rounds.get(round);
  }

  /** The filters of {@code filters} that have not published {@code round} (or a later one). */
  List<String> missing(List<String> filters, long round) {
    return filters.stream()
        .filter(
            f -> {
              Map<Long, Long> rounds = firstSeen.get(f);
              return rounds == null || rounds.keySet().stream().noneMatch(r -> r >= round);
            })
        .toList();
  }

  @Override
  public void close() throws InterruptedException {
    if (watch != null) {
      watch.close();
    }
    decoders.shutdown();
    decoders.awaitTermination(60, TimeUnit.SECONDS);
  }
}
