package io.bloomoperator.publish;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.BloomFilterStatus;
import io.bloomoperator.snapshot.Manifest;
import io.fabric8.kubernetes.api.model.ConfigMap;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * <p>A manifest is written before the status that records it. A process killed between the two
 * (found by the fault suite: an operator SIGKILLed mid stream publish) would take its own last
 * manifest for a foreign one after the restart, replace it with a full build and restart the stream
 * from that build's position; so, with a directory, the digests of every manifest are written there
 * just before the manifest itself ({@link #writing}) and, after a restart, the manifest they name
 * is ours too when its version is above the status's. The directory is the pod's own ({@code
 * BLOOM_STREAM_DIR}, an {@code emptyDir} that survives a container restart): whoever can edit
 * ConfigMaps cannot write there. Without it (or in a new pod) the status alone judges, as before.
 *
 * <p>Memory: two digests per filter, for at most {@link #MAX_REMEMBERED} filters (the least
 * recently used is forgotten; the status still holds its record).
 */
public final class OwnManifests {

  private static final Logger LOG = LoggerFactory.getLogger(OwnManifests.class);

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

  private final Path intentDir;

  /** Records in memory and in the status only. */
  public OwnManifests() {
    this(null);
  }

  /**
   * Records also in {@code intentDir} (null: none), where each manifest's digests are written
   * before the manifest.
   */
  public OwnManifests(Path intentDir) {
    this.intentDir = intentDir;
  }

  /**
   * Records, before it is written, that {@code desired} (of {@code version}) is about to be written
   * as {@code owner}'s manifest ConfigMap. A failure to record is logged and changes nothing else:
   * the status still judges.
   */
  public void writing(BloomFilter owner, ConfigMap desired, long version) {
    if (intentDir == null || owner.getMetadata().getUid() == null) {
      return;
    }
    String text =
        version
            + "\n"
            + ManifestRecord.manifestDigest(desired)
            + "\n"
            + ManifestRecord.buildRecordDigest(desired)
            + "\n";
    Path file = intentFile(owner);
    try {
      Files.createDirectories(intentDir);
      Path tmp = Files.createTempFile(intentDir, file.getFileName().toString(), ".tmp");
      try {
        Files.writeString(tmp, text, StandardCharsets.US_ASCII);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      } finally {
        Files.deleteIfExists(tmp);
      }
    } catch (IOException | RuntimeException e) {
      LOG.debug("the manifest digests could not be recorded in {}", intentDir, e);
    }
  }

  /** Forgets what is recorded on disk for {@code uid} (the filter is gone). */
  public void forget(String uid) {
    synchronized (this) {
      lastWritten.remove(uid);
    }
    if (intentDir != null && uid != null) {
      try {
        Files.deleteIfExists(intentDir.resolve(uid + ".manifest"));
      } catch (IOException | RuntimeException e) {
        LOG.debug("the manifest digests of {} could not be removed", uid, e);
      }
    }
  }

  private Path intentFile(BloomFilter owner) {
    return intentDir.resolve(owner.getMetadata().getUid() + ".manifest");
  }

  /** The digests recorded on disk before the last manifest write for {@code owner}, or null. */
  private Written intended(BloomFilter owner) {
    if (intentDir == null || owner.getMetadata().getUid() == null) {
      return null;
    }
    try {
      Path file = intentFile(owner);
      if (!Files.isRegularFile(file) || Files.size(file) > 512) {
        return null;
      }
      String[] lines = Files.readString(file, StandardCharsets.US_ASCII).split("\n", -1);
      if (lines.length < 3) {
        return null;
      }
      return new Written(lines[1], lines[2], Long.parseLong(lines[0]));
    } catch (IOException | RuntimeException e) {
      return null;
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
    if (!manifestOurs) {
      // Written just before a kill, its status write never made: ours, if newer than the record.
      Written intended = intended(owner);
      if (intended != null
          && intended.version() == manifest.version()
          && (recorded == null || intended.version() > recorded.version())
          && manifestDigest.equals(intended.manifest())) {
        manifestOurs = true;
        recorded = intended;
        LOG.info(
            "{}/{}: version {} is the one this operator wrote before it stopped (its status write"
                + " was lost); recorded before the write in {}",
            owner.getMetadata().getNamespace(),
            owner.getMetadata().getName(),
            manifest.version(),
            intentDir);
      }
    }
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
