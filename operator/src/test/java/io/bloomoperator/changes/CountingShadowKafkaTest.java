package io.bloomoperator.changes;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.KafkaChangesSpec;
import io.bloomoperator.snapshot.BitPositions;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.KeyInserter;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.source.EgressPolicy;
import io.bloomoperator.testing.servers.KafkaServer;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The counting shadow fed by the real Kafka stream (a real broker): a delete event read twice from
 * the same published position (the first publish failed) is applied once, so a live key sharing its
 * bits keeps them; and the event carries the place and time the exactly-once rules need.
 */
class CountingShadowKafkaTest {

  @TempDir Path dir;

  @Test
  void aDeleteReadAgainFromThePublishedPositionIsAppliedOnce() throws Exception {
    KafkaServer kafka = KafkaServer.shared();
    String topic = "counting-" + UUID.randomUUID();
    kafka.createTopic(topic, 1, Map.of());
    KafkaChangesSpec spec = new KafkaChangesSpec();
    spec.setBootstrapServers(List.of(kafka.bootstrap()));
    spec.setTopic(topic);
    spec.setValue(KafkaChangesSpec.ValueFormat.Json);
    spec.setKeyField("id");
    spec.setOperationField("op");

    BloomFilterBits.Builder b = BloomFilterBits.builder(KeyType.STRING, 1024, 7);
    BitPositions positions = BitPositions.of(b.format(), b.numBits(), b.numHashFunctions());
    // "twice" is in two rows of the source; "live" shares a bit with it.
    String live = CountingShadowTest.sharingBitWith(positions, "twice");
    try (CountingShadows shadows = new CountingShadows(dir, 1 << 20, 1 << 20);
        KafkaChangeStream stream =
            new KafkaChangeStream(
                spec,
                KeyType.STRING,
                StreamLimits.defaults(),
                EgressPolicy.of("127.0.0.1/32", null),
                "test-" + UUID.randomUUID())) {
      CountingShadow shadow = shadows.reserve("uid", "ns", positions, KeyType.STRING).shadow();
      KeyInserter counting = shadow.counting(b);
      counting.putString("twice");
      counting.putString("twice");
      counting.putString(live);
      BloomFilterBits bits = b.build();
      StreamPosition published = stream.positionAt(Instant.now());
      Instant scanEnd = Instant.now().minusSeconds(1);
      assertThat(shadows.follow("uid", shadow, published, scanEnd, "sha")).isTrue();

      kafka.produce(topic, List.of("{\"id\":\"twice\",\"op\":\"delete\"}"));
      ChangeStream.Batch first = readOneDelete(stream, published);
      CountingShadow.Deletion deletion = first.deleted().get(0);
      assertThat(deletion.key()).isEqualTo("twice");
      assertThat(deletion.time()).isNotNull();
      assertThat(shadow.apply(first.adds(), first.deleted(), first.next()).removed()).isEqualTo(1);

      // The publish of that batch failed: the next reconcile reads again from the published
      // position and gets the same delete.
      ChangeStream.Batch again = readOneDelete(stream, published);
      assertThat(again.deleted().get(0).offset()).isEqualTo(deletion.offset());
      CountingShadow.Applied replay = shadow.apply(again.adds(), again.deleted(), again.next());
      assertThat(replay.skipped()).isEqualTo(1);
      assertThat(replay.removed()).isZero();

      long[] clears = shadow.clears();
      BloomFilterBits after = BitPositions.withCleared(bits, clears, clears.length);
      assertThat(after.mightContainString(live)).as("the live key sharing a bit").isTrue();
      assertThat(after.mightContainString("twice")).as("its other row").isTrue();
    }
  }

  private static ChangeStream.Batch readOneDelete(ChangeStream stream, StreamPosition from)
      throws StreamException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (System.nanoTime() < deadline) {
      ChangeStream.Batch batch = stream.read(from);
      if (!batch.deleted().isEmpty()) {
        return batch;
      }
    }
    throw new AssertionError("no delete read within 10 s");
  }
}
