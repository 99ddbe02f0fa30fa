package io.bloomoperator.status;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.CanaryStatus;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code status.canary} this process last wrote per filter. The operator's own manifest write
 * (announcing a canary) triggers the next reconcile, which may be handed a cached resource whose
 * status does not show that canary yet; without this memory it would take its own canary for a
 * foreign one and withdraw it. The status stays the record that survives a restart: a status that
 * reports a newer canary version (another replica wrote it) wins over the memory.
 *
 * <p>Memory: one small record per filter, for at most {@link #MAX_REMEMBERED} filters.
 */
public final class CanaryRecords {

  public static final int MAX_REMEMBERED = 100_000;

  /**
   * A remembered write; {@code record} null: the write removed the canary record of {@code version}
   * (-1: none was known).
   */
  private record Written(CanaryStatus record, long version) {}

  private final Map<String, Written> byUid =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Written> eldest) {
          return size() > MAX_REMEMBERED;
        }
      };

  /** Remembers that the status just written holds {@code record} (null: none). */
  public synchronized void wrote(BloomFilter filter, CanaryStatus record) {
    String uid = filter.getMetadata().getUid();
    Written before = byUid.get(uid);
    long version =
        record != null && record.getVersion() != null
            ? record.getVersion()
            : before == null ? -1 : before.version();
    byUid.put(uid, new Written(record == null ? null : Serialization.clone(record), version));
  }

  /** The canary record to work with: {@code inStatus}, unless this process wrote a later one. */
  public synchronized CanaryStatus resolve(BloomFilter filter, CanaryStatus inStatus) {
    Written written = byUid.get(filter.getMetadata().getUid());
    long statusVersion =
        inStatus == null || inStatus.getVersion() == null ? -1 : inStatus.getVersion();
    if (written == null || statusVersion > written.version()) {
      return inStatus;
    }
    return written.record() == null ? null : Serialization.clone(written.record());
  }
}
