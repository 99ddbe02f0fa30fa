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
    return publish(
        new SnapshotStore(client, owner, null).writingAs(publisher, fence),
        DeltaPolicy.WHOLE_SNAPSHOTS_ONLY,
        bits,
        100,
        current,
        current == null ? 0 : current.manifest().version(),
        Instant.now());
  }

  /** Plans and applies a publish as the reconciler does, without budgets; chunks of 1 KiB. */
  public static PublishedSnapshot publish(
      SnapshotStore store,
      DeltaPolicy deltas,
      BloomFilterBits bits,
      long keys,
      PublishedSnapshot current,
      long lastKnownVersion,
      Instant now)
      throws PublishException {
    PublishPlan.Facts facts = store.facts(bits, current, deltas, 1024);
    PublishPlan plan =
        PublishPlan.plan(
            current == null ? null : current.manifest(),
            facts,
            deltas,
            PublishPlan.Budget.unlimited(),
            lastKnownVersion,
            now);
    return store.apply(
        plan, facts, bits, keys, current, new BuildRecord("t-" + now.toEpochMilli(), 1, now));
  }
}
