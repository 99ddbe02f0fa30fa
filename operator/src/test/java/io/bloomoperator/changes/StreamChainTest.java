package io.bloomoperator.changes;

import static io.bloomoperator.reconcile.SnapshotFixtures.manifest;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.publish.DeltaPolicy;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.source.JdbcTestSettings;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.servers.LogicalPostgres;
import io.bloomoperator.testing.servers.PostgresServer;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A change stream's publishes grow a longer chain than builds do before compacting it ({@link
 * DeltaPolicy#forStream}), on a real API server with a real PostgreSQL stream: with builds limited
 * to 3 deltas, the stream of a filter whose payload is ~36 KB appends deltas on the same base up to
 * the ski-rental length (12), never beyond, and then compacts onto the published version, which
 * readers already hold. Every key stays served throughout.
 */
@RealKubernetes(crdDirs = "crds")
@Timeout(240)
class StreamChainTest {

  private static final int BUILD_CHAIN = 3;

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(
          JdbcTestSettings.operator().toBuilder()
              .deltas(new DeltaPolicy(BUILD_CHAIN, 25, 50))
              .build());

  @Test
  void streamPublishesGrowTheChainToTheStreamLengthThenCompactOntoThePublishedVersion(
      KubernetesClient client, TestNamespace ns) throws Exception {
    PostgresServer pg = LogicalPostgres.shared();
    String table = PostgresLogicalOperatorTest.readyProducts(client, ns, "ch");

    Manifest first = manifest(client, ns.name(), "products");
    long streamLength =
        new DeltaPolicy(BUILD_CHAIN, 25, 50).forStream(first.totalBytes()).maxDeltas();
    assertThat(streamLength)
        .as("the stream length of a %d-byte payload", first.totalBytes())
        .isEqualTo(12);

    List<String> produced = new ArrayList<>();
    List<Manifest> published = new ArrayList<>();
    try (LiveBloomFilter<String> reader =
            BloomFilterWatcher.watch(client, ns.name(), "products", LiveKeyType.STRING);
        Connection writer = pg.connect();
        var insert = writer.prepareStatement("INSERT INTO " + table + " VALUES (?, 'x')")) {
      // One row, one new version, until the chain has been compacted once.
      Manifest last = first;
      for (int i = 0; i < streamLength + 3; i++) {
        String key = "sku-streamed-" + i;
        insert.setString(1, key);
        insert.executeUpdate();
        produced.add(key);
        long before = last.version();
        await()
            .atMost(Duration.ofSeconds(20))
            .pollInterval(Duration.ofMillis(100))
            .until(() -> manifest(client, ns.name(), "products").version() > before);
        last = manifest(client, ns.name(), "products");
        published.add(last);
        await().atMost(Duration.ofSeconds(20)).until(() -> reader.mightContain(key));
      }
      assertThat(produced).allMatch(reader::mightContain);
    }

    List<Integer> lengths = published.stream().map(m -> m.deltas().size()).toList();
    System.out.println("chain lengths after each stream publish: " + lengths);
    assertThat(lengths).as("never beyond the stream length").allMatch(n -> n <= streamLength);
    int longest = lengths.indexOf((int) streamLength);
    assertThat(longest)
        .as(
            "the chain grew past the builds' %d deltas to %d: %s",
            BUILD_CHAIN, streamLength, lengths)
        .isNotNegative();
    for (int i = 0; i <= longest; i++) {
      assertThat(published.get(i).chain().baseVersion())
          .as("deltas on the first base up to the stream length")
          .isEqualTo(first.version());
    }
    Manifest compacted = published.get(longest + 1);
    assertThat(compacted.chain().baseVersion())
        .as("compacted onto the version readers held")
        .isEqualTo(published.get(longest).version());
    assertThat(compacted.deltas()).hasSize(1);
  }
}
