package io.bloomoperator.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.reconcile.SnapshotFixtures;
import io.bloomoperator.status.ReadyCondition;
import io.bloomoperator.watch.LiveBloomFilter;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * The checks of fault 8 around one outage of a filter's source, whatever the source: while it
 * lasts, the last good version stays published, a reader serves its keys and Ready=False says why
 * (its message checked by the caller); once the source is good again, the reader serves the new
 * content and Ready turns True.
 */
final class OutageWatch {

  private final KubernetesClient client;
  private final String namespace;
  private final String filter;
  private final LiveBloomFilter<String> reader;
  private long samples;

  OutageWatch(
      KubernetesClient client, String namespace, String filter, LiveBloomFilter<String> reader) {
    this.client = client;
    this.namespace = namespace;
    this.filter = filter;
    this.reader = reader;
  }

  /**
   * Samples every 0.5 s while the outage lasts.
   *
   * @param good the version published before the outage
   * @param goodKeys keys of that version
   * @param message checks each Ready=False message
   * @return the Ready=False reasons seen
   */
  Set<String> during(
      Object fault, Duration outage, long good, List<String> goodKeys, Consumer<String> message)
      throws Exception {
    Set<String> reasons = new TreeSet<>();
    long end = System.nanoTime() + outage.toNanos();
    while (System.nanoTime() < end) {
      assertThat(SnapshotFixtures.manifest(client, namespace, filter).version())
          .as("%s: the last good version stays published", fault)
          .isEqualTo(good);
      assertThat(goodKeys)
          .as("%s: the reader serves the last good version", fault)
          .allMatch(reader::mightContain);
      ready()
          .filter(c -> "False".equals(c.getStatus()))
          .ifPresent(
              c -> {
                reasons.add(c.getReason());
                assertThat(c.getMessage()).isNotBlank().doesNotContain("\tat ");
                message.accept(c.getMessage());
              });
      samples++;
      Thread.sleep(500);
    }
    return reasons;
  }

  /**
   * Call once the source is good again: waits until the reader serves {@code newKeys}, then until
   * Ready is True (the status is written right after the manifest).
   *
   * @return milliseconds until the reader served the new keys
   */
  long recovery(List<String> newKeys) {
    long recovered = System.nanoTime();
    await()
        .atMost(Duration.ofMinutes(3))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> newKeys.stream().allMatch(reader::mightContain));
    long publishedAfter = Duration.ofNanos(System.nanoTime() - recovered).toMillis();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> ready().filter(c -> "True".equals(c.getStatus())), Optional::isPresent);
    return publishedAfter;
  }

  /** Samples taken so far. */
  long samples() {
    return samples;
  }

  private Optional<Condition> ready() {
    BloomFilter resource =
        client.resources(BloomFilter.class).inNamespace(namespace).withName(filter).get();
    return ReadyCondition.of(resource);
  }
}
