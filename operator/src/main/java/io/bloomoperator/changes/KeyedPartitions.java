package io.bloomoperator.changes;

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
 */
final class KeyedPartitions {

  private KeyedPartitions() {}

  /**
   * Whether {@code record}, an event of {@code id}, is keyed by the ID and in the default
   * partitioner's partition among {@code partitionCount}.
   */
  static boolean ordered(ConsumerRecord<byte[], byte[]> record, String id, int partitionCount) {
    byte[] recordKey = record.key();
    return recordKey != null
        && partitionCount > 0
        && Arrays.equals(recordKey, id.getBytes(StandardCharsets.UTF_8))
        && record.partition() == Utils.toPositive(Utils.murmur2(recordKey)) % partitionCount;
  }
}
