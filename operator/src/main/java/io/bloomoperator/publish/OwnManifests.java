package io.bloomoperator.publish;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.BloomFilterStatus;
import io.bloomoperator.snapshot.Manifest;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Decides whether the published manifest ConfigMap is the one this operator wrote, before anything
 * of it is used: anyone with ConfigMap update rights can edit it (a {@code createdAt} in 2999 the
 * operator would wait for or copy into its next signed manifest, an edited chain or version to
 * build deltas on), or restore a genuinely signed old version with the current build record (which
 * would look up to date). Its own records are the judge: the {@link ManifestRecord} digests of the
 * last manifest written, in this process's memory (the status the operator is handed may lag behind
 * its own last write) and in the status (which survives a restart).
 *
 * <ul>
 *   <li>manifest.json or manifest.sig not as recorded, or a {@code createdAt} beyond this clock
 *       plus {@link #MAX_CLOCK_SKEW}: not ours. The next version is a whole new base numbered above
 *       every version seen, and nothing of the foreign manifest is built on, copied or waited for.
 *   <li>only the build record not as recorded: the manifest is ours, its build record is ignored,
 *       so the filter is rebuilt (an identical payload only writes the build record again).
 * </ul>
 *
 * <p>Memory: two digests per filter, for at most {@link #MAX_REMEMBERED} filters (the least
 * recently used is forgotten; the status still holds its record).
 */
public final class OwnManifests {

  /** The Warning event's reason when the published manifest is not the one this operator wrote. */
  public static final String EVENT_REASON = "ManifestNotOurs";

  /**
   * How far a trusted manifest's {@code createdAt} may lie ahead of this operator's clock (the
   * clocks of two replicas differ by about this much at most); a new version is never stamped later
   * than now plus this.
   */
  public static final Duration MAX_CLOCK_SKEW = Duration.ofMinutes(2);

  static final int MAX_REMEMBERED = 100_000;

  private static final String NOT_OURS =
      "the published manifest ConfigMap is not the one this operator last wrote (its manifest or "
          + "signature differs from the record in the status, or its createdAt lies in the "
          + "future); it is not built on, and a new whole version replaces it";

  private static final String RECORD_NOT_OURS =
      "the build record annotations of the published manifest ConfigMap are not the ones this "
          + "operator last wrote; they are ignored and the filter is rebuilt";

  /** The digests of a manifest ConfigMap as written, and its version. */
  private record Written(String manifest, String buildRecord, long version) {}

  private final Map<String, Written> lastWritten =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Written> eldest) {
          return size() > MAX_REMEMBERED;
        }
      };

  /**
   * The published snapshot checked against the operator's records.
   *
   * @param usable what the reconcile may use: {@code published} when all is ours; without its build
   *     record when only that is foreign; when the manifest is foreign, the same ConfigMap (its
   *     resourceVersion still guards the next write) without a manifest, i.e. "no version of ours
   *     published"
   * @param problem for the Warning event, or null when all is ours: a fixed text, nothing of the
   *     foreign ConfigMap is echoed
   * @param seenVersion a foreign manifest's version (else 0, always in {@link
   *     io.bloomoperator.snapshot.SnapshotVersions}' range since the manifest parsed): the next
   *     version goes above it too, so no reader that followed the foreign manifest sees a version
   *     number reused, as far as {@link VersionNumbering#moves} lets a foreign number count
   */
  public record Checked(PublishedSnapshot usable, String problem, long seenVersion) {

    /** Whether anything was refused. */
    public boolean foreign() {
      return problem != null;
    }
  }

  /** Remembers that this process wrote {@code written} as {@code owner}'s manifest ConfigMap. */
  public synchronized void wrote(BloomFilter owner, PublishedSnapshot written) {
    if (written != null && written.manifest() != null) {
      lastWritten.put(
          owner.getMetadata().getUid(),
          new Written(
              ManifestRecord.manifestDigest(written.configMap()),
              ManifestRecord.buildRecordDigest(written.configMap()),
              written.manifest().version()));
    }
  }

  /**
   * Checks {@code published} (as read, may be null) against the records for {@code owner}.
   *
   * @param now this operator's clock
   */
  public Checked check(BloomFilter owner, PublishedSnapshot published, Instant now) {
    if (published == null || published.manifest() == null) {
      return new Checked(published, null, 0);
    }
    Manifest manifest = published.manifest();
    Written recorded = recorded(owner);
    String manifestDigest = ManifestRecord.manifestDigest(published.configMap());
    boolean manifestOurs =
        recorded == null
            ? legacyMatch(owner.getStatus(), manifest)
            : manifestDigest.equals(recorded.manifest());
    if (!manifestOurs || manifest.created().isAfter(now.plus(MAX_CLOCK_SKEW))) {
      return new Checked(published.withoutManifest(), NOT_OURS, Math.max(0, manifest.version()));
    }
    if (recorded == null
        || recorded.buildRecord() == null
        || recorded.buildRecord().equals(ManifestRecord.buildRecordDigest(published.configMap()))) {
      return new Checked(published, null, 0);
    }
    return new Checked(published.withoutBuildRecord(), RECORD_NOT_OURS, 0);
  }

  /**
   * What this process last wrote for {@code owner}: newer than the status it is handed (a status
   * write can lag or be lost), so a replay of an older version of its own does not match. The
   * status's record instead when there is no such memory (after a restart), or when the status
   * reports a higher version (another replica published while this one was not the leader). Null
   * when there is neither (a status written before manifest digests existed, or none at all).
   */
  private Written recorded(BloomFilter owner) {
    Written remembered;
    synchronized (this) {
      remembered = lastWritten.get(owner.getMetadata().getUid());
    }
    BloomFilterStatus status = owner.getStatus();
    Written inStatus =
        status == null || status.getManifestDigest() == null || status.getVersion() == null
            ? null
            : new Written(
                status.getManifestDigest(), status.getBuildRecordDigest(), status.getVersion());
    if (remembered == null || (inStatus != null && inStatus.version() > remembered.version())) {
      return inStatus;
    }
    return remembered;
  }

  /**
   * Written by an operator before manifest digests: the version and payload the status reports must
   * match. The next status write records the digests.
   */
  private static boolean legacyMatch(BloomFilterStatus status, Manifest manifest) {
    return status != null
        && status.getVersion() != null
        && status.getVersion() == manifest.version()
        && manifest.sha256().equals(status.getSha256());
  }
}
