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
 * bits keeps them; a record keyed by its ID in the default partitioner's partition is ordered, and
 * one on another partition, keyed otherwise or not keyed is not (its delete waits, its add stops
 * counting).
 */
class CountingShadowKafkaTest {

  @TempDir Path dir;

  @Test
  void aDeleteReadAgainFromThePublishedPositionIsAppliedOnce() throws Exception {
    KafkaServer kafka = KafkaServer.shared();
    String topic = "counting-" + UUID.randomUUID();
    kafka.createTopic(topic, 1, Map.of());
    KafkaChangesSpec spec = spec(kafka, topic);

    BloomFilterBits.Builder b = BloomFilterBits.builder(KeyType.STRING, 1024, 7);
    BitPositions positions = BitPositions.of(b.format(), b.numBits(), b.numHashFunctions());
    // "gone" is in one row of the source; "live" shares a bit with it.
    String live = CountingShadowTest.sharingBitWith(positions, "gone");
    try (CountingShadows shadows = new CountingShadows(dir, 1 << 20, 1 << 20);
        KafkaChangeStream stream = stream(spec)) {
      CountingShadow shadow = shadows.reserve("uid", "ns", positions, KeyType.STRING, 3).shadow();
      KeyInserter counting = shadow.counting(b);
      counting.putString("gone");
      counting.putString(live);
      BloomFilterBits bits = b.build();
      StreamPosition published = stream.positionAt(Instant.now());
      assertThat(shadows.follow("uid", shadow, published, "sha")).isTrue();

      kafka.produceKeyed(topic, "gone", "{\"id\":\"gone\",\"op\":\"delete\"}");
      ChangeStream.Batch first = readOneDelete(stream, published);
      CountingShadow.Deletion deletion = first.deleted().get(0);
      assertThat(deletion.key()).isEqualTo("gone");
      assertThat(deletion.ordered()).isTrue();
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
      // Applied twice, the replay would have taken the count "live" holds on the shared bit.
      assertThat(shadow.occurrences("gone")).isZero();
    }
  }

  @Test
  void onlyRecordsKeyedByTheirIdOnTheDefaultPartitionAreOrdered() throws Exception {
    KafkaServer kafka = KafkaServer.shared();
    String topic = "ordering-" + UUID.randomUUID();
    kafka.createTopic(topic, 3, Map.of());
    KafkaChangesSpec spec = spec(kafka, topic);
    try (KafkaChangeStream stream = stream(spec)) {
      StreamPosition from = stream.positionAt(Instant.now());
      String delete = "{\"id\":\"gone\",\"op\":\"delete\"}";
      int home = kafka.produceKeyed(topic, "gone", delete).partition();
      kafka.produce(topic, (home + 1) % 3, "gone", delete); // another partition
      kafka.produce(topic, home, "other", delete); // the ID's partition, another record key
      kafka.produceKeyed(topic, "new", "{\"id\":\"new\"}");
      kafka.produce(topic, List.of("{\"id\":\"unkeyed\"}"));
      ChangeStream.Batch batch = readAll(stream, from, 3, 2);
      assertThat(batch.deleted())
          .extracting(CountingShadow.Deletion::ordered)
          .containsExactlyInAnyOrder(true, false, false);
      assertThat(
              batch.deleted().stream()
                  .filter(CountingShadow.Deletion::ordered)
                  .map(CountingShadow.Deletion::partition))
          .containsExactly(home);
      assertThat(batch.unorderedAdds()).as("the unkeyed add").isEqualTo(1);
    }
  }

  private static KafkaChangeStream stream(KafkaChangesSpec spec) throws StreamException {
    return new KafkaChangeStream(
        spec,
        KeyType.STRING,
        StreamLimits.defaults(),
        EgressPolicy.of("127.0.0.1/32", null),
        "test-" + UUID.randomUUID());
  }

  /** A topic of JSON events {"id": ..., "op": "delete"}. */
  private static KafkaChangesSpec spec(KafkaServer kafka, String topic) {
    KafkaChangesSpec spec = new KafkaChangesSpec();
    spec.setBootstrapServers(List.of(kafka.bootstrap()));
    spec.setTopic(topic);
    spec.setValue(KafkaChangesSpec.ValueFormat.Json);
    spec.setKeyField("id");
    spec.setOperationField("op");
    return spec;
  }

  private static ChangeStream.Batch readAll(
      ChangeStream stream, StreamPosition from, int deletes, int adds) throws StreamException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (System.nanoTime() < deadline) {
      ChangeStream.Batch batch = stream.read(from);
      if (batch.deleted().size() == deletes && batch.adds().size() == adds) {
        return batch;
      }
    }
    throw new AssertionError("the records were not read within 10 s");
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
