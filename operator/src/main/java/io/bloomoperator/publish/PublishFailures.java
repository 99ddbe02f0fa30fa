package io.bloomoperator.publish;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.ChunkStore;
import io.bloomoperator.snapshot.SnapshotNames;
import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * The one mapping of what can go wrong while a version is written to the reason the status shows:
 * storage full, a manifest conflict, a name taken by someone else's object, anything else. (A write
 * that reported failure but was committed is no failure: {@link SnapshotStore} recognises it before
 * it gets here.) Messages name the operator's own objects and versions only.
 */
final class PublishFailures {

  private PublishFailures() {}

  /**
   * @param created chunks this attempt created (or may have)
   * @param left how many of them could not be removed again
   * @throws WriteFence.NotLeaderException rethrown as it is: not a publish failure to report
   */
  static PublishException of(Exception e, String filterName, long version, int created, int left) {
    if (e instanceof WriteFence.NotLeaderException notLeader) {
      throw notLeader;
    }
    if (e instanceof ChargedManifests.Refused refused) {
      return refused.refusal();
    }
    if (StorageFull.causedBy(e)) {
      return storageFull(version, created, left);
    }
    var unavailable = StoreUnavailableException.in(e);
    if (unavailable.isPresent()) {
      // Not the server's text: it may name the endpoint or bucket, which are the administrator's.
      return new PublishException(
          Reasons.STORE_UNAVAILABLE,
          unavailable.get().getMessage()
              + ": version "
              + version
              + " was not published; the published version keeps serving",
          null);
    }
    if (e instanceof ChunkStore.NameTakenException taken) {
      return nameTaken(taken, version);
    }
    if (e instanceof KubernetesClientException kce && kce.getCode() == 409) {
      return new PublishException(
          Reasons.MANIFEST_CONFLICT,
          "manifest "
              + SnapshotNames.manifestName(filterName)
              + " changed while version "
              + version
              + " was being published; will retry",
          e);
    }
    return new PublishException(
        Reasons.PUBLISH_FAILED, "publishing version " + version + " failed: " + rootMessage(e), e);
  }

  /**
   * Expected while etcd is full, so no stack trace: the reason says it all. Deletes still pass a
   * full etcd, so the chunks written so far are normally gone already.
   */
  private static PublishException storageFull(long version, int created, int left) {
    return new PublishException(
        Reasons.STORAGE_FULL,
        StorageFull.DESCRIPTION
            + ": version "
            + version
            + " was not published; "
            + (left == 0
                ? "the " + created + " chunk(s) written before were removed"
                : left + " chunk(s) written before are left for the next reconcile to remove")
            + "; the published version keeps serving",
        null);
  }

  private static PublishException nameTaken(ChunkStore.NameTakenException taken, long version) {
    return new PublishException(
        Reasons.NAME_CONFLICT,
        "ConfigMap "
            + taken.name()
            + " exists and is not a chunk of this BloomFilter; it is left untouched and version"
            + " "
            + version
            + " was not published",
        taken);
  }

  /** The manifest's name holds a ConfigMap this BloomFilter does not control. */
  static PublishException manifestNameTaken(String name) {
    return new PublishException(
        Reasons.NAME_CONFLICT,
        "ConfigMap "
            + name
            + " exists and is not controlled by this BloomFilter; it is left untouched. Rename"
            + " the BloomFilter, or delete or rename the ConfigMap (a BloomFilter deleted and"
            + " re-created under the same name waits here until the garbage collector removes the"
            + " old snapshot)",
        null);
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t == e ? String.valueOf(e.getMessage()) : e.getMessage() + " (" + t.getMessage() + ")";
  }
}
