package io.bloomoperator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.events.EventRecorder;
import io.bloomoperator.metrics.BuildMetrics;
import io.bloomoperator.publish.BuildRecord;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.SnapshotStore;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.status.OwnWrites;
import io.bloomoperator.status.ReadyCondition;
import io.bloomoperator.status.StatusReport;
import io.bloomoperator.status.StorageFullFailures;
import io.bloomoperator.testing.cluster.EtcdFiller;
import io.bloomoperator.testing.cluster.RestartableCluster;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Clock;
import java.time.Instant;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A publish and a status write against a real etcd that is out of space (a small {@code
 * --quota-backend-bytes}, filled by the test): the publish fails with {@link Reasons#STORAGE_FULL},
 * removes the chunks it wrote before etcd refused one, and the status report neither throws nor
 * writes an event while etcd refuses writes, remembers the failure, and records it once etcd has
 * room again.
 */
class EtcdFullPublishTest {

  private static final long QUOTA = 24L * 1024 * 1024;
  private static final String NS = "full";
  private static final String FILLERS = "filler";
  private static final Instant NOW = Instant.parse("2026-11-30T23:00:00Z");

  private static RestartableCluster cluster;
  private static KubernetesClient client;
  private static EtcdFiller filler;

  @BeforeAll
  static void start() {
    cluster = RestartableCluster.start(1, QUOTA);
    cluster.installCrds("crds");
    Config config = cluster.clientConfig(0);
    // Refused writes fail at once instead of after fabric8's ~20 s of retries.
    config.setRequestRetryBackoffLimit(0);
    client = new KubernetesClientBuilder().withConfig(config).build();
    client
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build())
        .create();
    filler = new EtcdFiller(cluster, QUOTA, FILLERS);
  }

  @AfterAll
  static void stop() {
    filler.close();
    client.close();
    cluster.close();
  }

  @Test
  void fullEtcdFailsThePublishCleanlyAndTheStatusSaysSoOnceThereIsRoom() throws Exception {
    BloomFilter filter =
        SnapshotFixtures.apply(
            client,
            NS,
            """
            apiVersion: bloomoperator.io/v1alpha1
            kind: BloomFilter
            metadata: {name: f}
            spec:
              falsePositiveRate: 0.01
              source: {inline: [a]}
            """);
    filler.fillUntilRefused();
    assertThat(cluster.etcdAlarms()).contains("NOSPACE");
    // A gap of a few chunks: the publish below writes some into it, then etcd refuses one.
    filler.freeSpace(0);
    filler.fillUntilGap(200 * 1024);
    filler.ensureRoomFor(2 * 32 * 1024);

    PublishException refused =
        catchThrowableOfType(
            PublishException.class,
            () ->
                new SnapshotStore(client, filter, null)
                    .publish(
                        bits(1_000_000),
                        1_000_000,
                        1,
                        32 * 1024,
                        null,
                        new BuildRecord(null, 1, NOW),
                        NOW));
    assertThat(refused).isNotNull();
    assertThat(refused.reason()).isEqualTo(Reasons.STORAGE_FULL);
    assertThat(refused.getMessage())
        .startsWith("etcd is out of space")
        .contains("version 1 was not published")
        .containsPattern("the [1-9][0-9]* chunk\\(s\\) written before were removed");
    assertThat(refused.getCause()).isNull();
    assertThat(cluster.etcdAlarms()).as("the publish ran etcd out of space").contains("NOSPACE");
    assertThat(chunks()).as("deletes pass a full etcd").isZero();

    // While etcd refuses writes: no exception, no event, the failure is remembered.
    StorageFullFailures failures = new StorageFullFailures();
    BloomFilter current = get();
    StatusReport whileFull = report(current, failures);
    UpdateControl<BloomFilter> control =
        whileFull.failed(Reasons.STORAGE_FULL, refused.getMessage(), true);
    assertThat(whileFull.written()).isFalse();
    assertThat(control.getScheduleDelay()).contains(2_000L);
    assertThat(failures.unrecordedSince(current)).contains(NOW);
    assertThat(ReadyCondition.of(get())).isEmpty();
    assertThat(events()).isZero();

    // An administrator frees space: the next status write records the failure and its event.
    filler.freeSpace(Integer.MAX_VALUE);
    StatusReport withRoom = report(get(), failures);
    withRoom.failed(Reasons.STORAGE_FULL, "etcd was out of space", true);
    assertThat(withRoom.written()).isTrue();
    assertThat(failures.unrecordedSince(current)).isEmpty();
    assertThat(ReadyCondition.of(get()).orElseThrow().getReason()).isEqualTo(Reasons.STORAGE_FULL);
    assertThat(events()).isEqualTo(1);
  }

  private static StatusReport report(BloomFilter filter, StorageFullFailures failures) {
    return new StatusReport(
        filter,
        client,
        new io.bloomoperator.publish.StatusBudget(
            new io.bloomoperator.publish.WriteBudget(
                io.bloomoperator.publish.WriteBudget.Limits.defaults())),
        new EventRecorder(client, Clock.systemUTC()),
        BuildMetrics.discarding(),
        failures,
        new OwnWrites(),
        NOW);
  }

  private static BloomFilter get() {
    return client.resources(BloomFilter.class).inNamespace(NS).withName("f").get();
  }

  private static long events() {
    return client.v1().events().inNamespace(NS).list().getItems().stream()
        .filter(e -> Reasons.STORAGE_FULL.equals(e.getReason()))
        .count();
  }

  private static int chunks() {
    return client
        .configMaps()
        .inNamespace(NS)
        .withLabel(SnapshotNames.LABEL_ROLE, SnapshotNames.ROLE_CHUNK)
        .list()
        .getItems()
        .size();
  }

  /** About {@code keys} × 1.2 bytes of incompressible bits. */
  private static BloomFilterBits bits(int keys) {
    BloomFilterBits.Builder builder = BloomFilterBits.builder(KeyType.STRING, keys * 10L, 7);
    for (int i = 0; i < keys; i++) {
      builder.putString("k" + i);
    }
    return builder.build();
  }
}
