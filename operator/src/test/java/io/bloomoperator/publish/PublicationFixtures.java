package io.bloomoperator.publish;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.KeyType;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Instant;

/** Small whole-snapshot publishes (2 chunks of 1 KiB) for tests of what a publish writes. */
public final class PublicationFixtures {

  private PublicationFixtures() {}

  /** A filter of 200 keys {@code prefix0 …}, 2,048 bytes of bits. */
  public static BloomFilterBits bits(String prefix) {
    BloomFilterBits.Builder builder = BloomFilterBits.builder(KeyType.STRING, 64 * 256, 3);
    for (int i = 0; i < 200; i++) {
      builder.putString(prefix + i);
    }
    return builder.build();
  }

  /**
   * Publishes {@code bits} as the next version after {@code current} (null: the first), as the
   * replica {@code publisher} behind {@code fence}; returns what is published afterwards.
   */
  public static PublishedSnapshot publish(
      KubernetesClient client,
      BloomFilter owner,
      String publisher,
      WriteFence fence,
      BloomFilterBits bits,
      PublishedSnapshot current)
      throws PublishException {
    Instant now = Instant.now();
    return new Publication(
            client,
            owner,
            null,
            Long.MAX_VALUE,
            DeltaPolicy.WHOLE_SNAPSHOTS_ONLY,
            publisher,
            fence,
            new WriteBudget(WriteBudget.Limits.defaults()))
        .publish(
            bits,
            100,
            current,
            current == null ? 0 : current.manifest().version(),
            new SnapshotStore.BuildRecord("t-" + now.toEpochMilli(), 1, now),
            1024,
            now)
        .published();
  }
}
