package io.bloomoperator.changes;

import io.bloomoperator.snapshot.KeyType;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.utils.Utils;

/**
 * The ordering rule of counting deletions on Kafka ({@code spec.changes.deletions: Counting}).
 * Kafka orders records within a partition only. A delete of an ID followed by its re-add, where the
 * add lies before the full build's resume position (the scan reflects it, so the ID is counted) and
 * the delete after it on another partition, would be read and applied after the scan: a live ID's
 * bits cleared. When every event of an ID is in one partition, a delete before such an add is
 * before the resume position too, and is never read.
 *
 * <p>The operator can check that per record, without trusting producer timestamps: the record's
 * Kafka key is the ID's UTF-8 bytes (a Long ID as its decimal text, as in the value) and its
 * partition is the one Kafka's default partitioner chooses for that key, {@code
 * toPositive(murmur2(key)) % partitions}. A delete that breaks it waits for the next full build; an
 * add that breaks it stops counting until the next full build (the add itself is published).
 *
 * <p>A Long ID must also be written in its one canonical decimal form ({@code 7}, not {@code 007}
 * or {@code +7}): the value's parser accepts all of them as the same ID, so keys "7" and "007"
 * would each pass on their own while splitting one ID's events over two partitions.
 */
final class KeyedPartitions {

  private KeyedPartitions() {}

  /**
   * Whether {@code record}, an event of {@code id}, is keyed by the ID and in the default
   * partitioner's partition among {@code partitionCount}.
   */
  static boolean ordered(
      ConsumerRecord<byte[], byte[]> record, String id, KeyType keyType, int partitionCount) {
    byte[] recordKey = record.key();
    return recordKey != null
        && (keyType != KeyType.LONG || canonicalLong(id))
        && partitionCount > 0
        && Arrays.equals(recordKey, id.getBytes(StandardCharsets.UTF_8))
        && record.partition() == Utils.toPositive(Utils.murmur2(recordKey)) % partitionCount;
  }

  private static boolean canonicalLong(String id) {
    try {
      return Long.toString(Long.parseLong(id)).equals(id);
    } catch (NumberFormatException e) {
      return false;
    }
  }
}
