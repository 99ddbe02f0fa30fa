package io.bloomoperator.changes;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.snapshot.KeyType;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;

/** The ordering rule of counting deletions, record by record. */
class KeyedPartitionsTest {

  private static final int PARTITIONS = 6;

  private static ConsumerRecord<byte[], byte[]> record(String key, int partition) {
    return new ConsumerRecord<>(
        "ids",
        partition,
        0L,
        key == null ? null : key.getBytes(StandardCharsets.UTF_8),
        new byte[0]);
  }

  private static int defaultPartition(String key) {
    return Utils.toPositive(Utils.murmur2(key.getBytes(StandardCharsets.UTF_8))) % PARTITIONS;
  }

  @Test
  void aRecordKeyedByItsIdOnTheDefaultPartitionIsOrdered() {
    assertThat(
            KeyedPartitions.ordered(
                record("sku-1", defaultPartition("sku-1")), "sku-1", KeyType.STRING, PARTITIONS))
        .isTrue();
    assertThat(
            KeyedPartitions.ordered(
                record("7", defaultPartition("7")), "7", KeyType.LONG, PARTITIONS))
        .isTrue();
  }

  @Test
  void anotherKeyAnotherPartitionOrNoKeyIsNot() {
    int right = defaultPartition("sku-1");
    assertThat(
            KeyedPartitions.ordered(
                record("sku-1", (right + 1) % PARTITIONS), "sku-1", KeyType.STRING, PARTITIONS))
        .isFalse();
    assertThat(
            KeyedPartitions.ordered(
                record("sku-2", defaultPartition("sku-2")), "sku-1", KeyType.STRING, PARTITIONS))
        .isFalse();
    assertThat(KeyedPartitions.ordered(record(null, right), "sku-1", KeyType.STRING, PARTITIONS))
        .isFalse();
  }

  @Test
  void aLongIdOnlyInItsCanonicalForm() {
    // "007" and "+7" are the ID 7 to the value's parser; keyed so, each on its own default
    // partition, one ID's events would be split over partitions.
    for (String text : new String[] {"007", "+7", "-0"}) {
      assertThat(
              KeyedPartitions.ordered(
                  record(text, defaultPartition(text)), text, KeyType.LONG, PARTITIONS))
          .as(text)
          .isFalse();
    }
    // As a String ID "007" is its own key.
    assertThat(
            KeyedPartitions.ordered(
                record("007", defaultPartition("007")), "007", KeyType.STRING, PARTITIONS))
        .isTrue();
  }
}
