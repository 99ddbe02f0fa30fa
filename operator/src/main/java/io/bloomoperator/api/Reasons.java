package io.bloomoperator.api;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

/**
 * Every reason the operator puts on a BloomFilter's Ready condition (and on its Warning events),
 * and every phase. Users match on these words in alerts and scripts, so they are API: one place
 * defines them, and docs/configuration.md's table is tested against {@link #all()}.
 */
public final class Reasons {

  /** Ready=True: the current version is published and describes the spec and the source. */
  public static final String PUBLISHED = "Published";

  /** The spec is invalid in a way the CRD schema could not express; waits for a spec change. */
  public static final String INVALID_SPEC = "InvalidSpec";

  /** The object named by the source (ConfigMap, Secret, HTTP URL) does not exist (yet). */
  public static final String SOURCE_NOT_FOUND = "SourceNotFound";

  /** The source object exists but lacks the named key. */
  public static final String SOURCE_KEY_NOT_FOUND = "SourceKeyNotFound";

  /** The source could not be read (permissions, I/O, a server error, bad encoding). */
  public static final String SOURCE_UNREADABLE = "SourceUnreadable";

  /** More lines than maxMalformedKeys are not keys of the declared type. */
  public static final String MALFORMED_KEYS = "MalformedKeys";

  /** An HTTP or JDBC source did not connect, answer or finish in time. */
  public static final String SOURCE_TIMEOUT = "SourceTimeout";

  /** The database refused the credentials. */
  public static final String SOURCE_AUTH_FAILED = "SourceAuthFailed";

  /** The database could not run the query. */
  public static final String SOURCE_QUERY_FAILED = "SourceQueryFailed";

  /** An HTTP source's URL or redirect leads to an address the egress policy refuses. */
  public static final String SOURCE_ADDRESS_NOT_ALLOWED = "SourceAddressNotAllowed";

  /** An HTTP source broke a line or body limit. */
  public static final String SOURCE_LIMIT_EXCEEDED = "SourceLimitExceeded";

  /** A Secret does not allow this filter (or the destination host) in its annotations. */
  public static final String SECRET_NOT_ALLOWED = "SecretNotAllowed";

  /**
   * The filter exceeds BLOOM_MAX_SNAPSHOT_BYTES (BLOOM_MAX_STORE_SNAPSHOT_BYTES in an object store)
   * or the format's limits; nothing is written.
   */
  public static final String SNAPSHOT_TOO_LARGE = "SnapshotTooLarge";

  /** The namespace's snapshots would exceed BLOOM_MAX_NAMESPACE_BYTES; nothing is written. */
  public static final String NAMESPACE_QUOTA_EXCEEDED = "NamespaceQuotaExceeded";

  /**
   * The namespace or the filter wrote its hourly budget of bytes to etcd; retried when it has room.
   */
  public static final String WRITE_BUDGET_EXCEEDED = "WriteBudgetExceeded";

  /** A ConfigMap of the snapshot's names exists and is not controlled by this BloomFilter. */
  public static final String NAME_CONFLICT = "NameConflict";

  /** Signing is configured but the key is unusable; nothing is written. */
  public static final String SIGNING_KEY_UNAVAILABLE = "SigningKeyUnavailable";

  /** The API server refused a write; the partial version was removed. */
  public static final String PUBLISH_FAILED = "PublishFailed";

  /**
   * etcd is out of space (its quota is reached, NOSPACE alarm): the API server refused a write of
   * the publish; the partial version was removed and the published version keeps serving.
   */
  public static final String STORAGE_FULL = "StorageFull";

  /** Someone else changed the manifest during a publish. */
  public static final String MANIFEST_CONFLICT = "ManifestConflict";

  /** spec.snapshot.store names no BloomStore. */
  public static final String STORE_NOT_FOUND = "StoreNotFound";

  /** The BloomStore named by spec.snapshot.store does not allow this namespace. */
  public static final String STORE_NOT_ALLOWED = "StoreNotAllowed";

  /**
   * The object store could not be reached or refused the operator; the published version keeps
   * serving and the publish is retried.
   */
  public static final String STORE_UNAVAILABLE = "StoreUnavailable";

  /** The namespace's objects would exceed the store's namespaceBudgetBytes; nothing is written. */
  public static final String STORE_BUDGET_EXCEEDED = "StoreBudgetExceeded";

  /**
   * The namespace uploaded its hourly budget of bytes to object stores
   * (BLOOM_STORE_NAMESPACE_UPLOAD_BYTES_PER_HOUR); nothing is written.
   */
  public static final String STORE_UPLOAD_BUDGET_EXCEEDED = "StoreUploadBudgetExceeded";

  /**
   * The operator stopped (ran out of memory, was killed) during this filter's last build; the next
   * build waits for a backoff that doubles with each such build in a row.
   */
  public static final String BUILD_CRASHED = "BuildCrashed";

  /**
   * Ready=True: spec.rollout.paused holds new builds; readers keep the published version, the
   * newest build is in {@code status.held}.
   */
  public static final String ROLLOUT_PAUSED = "RolloutPaused";

  /**
   * Ready=True: spec.rollout.pinVersion serves a retained version; new builds are held in {@code
   * status.held}.
   */
  public static final String ROLLOUT_PINNED = "RolloutPinned";

  /**
   * A new build's key count is more than spec.rollout.maxKeyCountDropPercent below the published
   * version's: held for approval, readers keep the published version.
   */
  public static final String KEY_COUNT_DROPPED = "KeyCountDropped";

  /**
   * Ready=True: a new version is a canary (spec.rollout.canary), served by its share of the readers
   * while the stable version serves the others; new builds wait until it is promoted or withdrawn.
   */
  public static final String CANARY_RUNNING = "CanaryRunning";

  /**
   * Readers of the canary share failed to load the canary: it was withdrawn, the stable version
   * serves every reader, and the same content is held until the source changes.
   */
  public static final String CANARY_HALTED = "CanaryHalted";

  /**
   * Ready=True: the canary was aborted by hand ({@code kubectl bloom abort}); the stable version
   * serves every reader and the same content is held until the source changes.
   */
  public static final String CANARY_ABORTED = "CanaryAborted";

  /**
   * spec.rollout.pinVersion names a version whose chunks are not retained (or whose retained
   * manifest does not match the operator's record); the published version keeps serving.
   */
  public static final String VERSION_NOT_RETAINED = "VersionNotRetained";

  /**
   * The next version would be above the highest one every reader and store accepts
   * (io.bloomoperator.snapshot.SnapshotVersions#MAX); nothing is written, the published version
   * keeps serving. Recreating the filter restarts numbering at 1.
   */
  public static final String VERSIONS_EXHAUSTED = "VersionsExhausted";

  /** An unexpected error; the status names only its kind, the operator log has the rest. */
  public static final String RECONCILE_ERROR = "ReconcileError";

  /** {@code status.phase} while a build runs ({@code keysRead} moves). */
  public static final String PHASE_BUILDING = "Building";

  /** {@code status.phase} when the published version is current. */
  public static final String PHASE_IDLE = "Idle";

  /** {@code status.phase} while Ready is False. */
  public static final String PHASE_FAILED = "Failed";

  private Reasons() {}

  /** Every condition reason above (not the phases), in declaration order. */
  public static List<String> all() {
    return constants(false);
  }

  /** Every phase above. */
  public static List<String> phases() {
    return constants(true);
  }

  private static List<String> constants(boolean phases) {
    List<String> values = new ArrayList<>();
    for (Field field : Reasons.class.getDeclaredFields()) {
      int m = field.getModifiers();
      if (Modifier.isStatic(m)
          && Modifier.isPublic(m)
          && field.getType() == String.class
          && field.getName().startsWith("PHASE_") == phases) {
        try {
          values.add((String) field.get(null));
        } catch (IllegalAccessException e) {
          throw new IllegalStateException(e);
        }
      }
    }
    return values;
  }
}
