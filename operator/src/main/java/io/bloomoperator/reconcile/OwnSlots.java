package io.bloomoperator.reconcile;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.BloomFilterStatus;
import io.bloomoperator.api.StreamStatus;
import io.bloomoperator.changes.ChangeStream;
import io.bloomoperator.changes.ChangeStreams;
import io.bloomoperator.events.EventRecorder;
import io.bloomoperator.publish.OwnManifests;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.publish.SnapshotStore;
import io.bloomoperator.status.DraftStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Instant;
import java.util.Optional;

/**
 * Decides whether {@code status.stream.slot} names a replication slot this operator created for the
 * filter, before the record opens, reads or drops a slot. Whoever may patch the BloomFilter status
 * could otherwise write another application's slot there (and name it in the spec): the operator
 * would read it, moving that consumer's confirmed position, and drop it at deletion. The judge is
 * what the status cannot reach, as for the stream position ({@link OwnManifests}): the slot the
 * open stream of this process created or was opened with, else the slot the published version's
 * build record names ({@link io.bloomoperator.publish.BuildRecord#ANNOTATION_STREAM_SLOT}),
 * believed only when the manifest and its build record are the ones this operator wrote (their
 * digests in memory, on the pod's disk and in the status). A status record that is neither is
 * refused: it is ignored (the stream opens, and deletion drops, only the vouched slot), condition
 * {@value #CONDITION}=False says so, with one Warning event {@value #EVENT_REASON}.
 */
final class OwnSlots {

  /** The condition that reports a refused slot record; absent while the record is trusted. */
  static final String CONDITION = "SlotRecordTrusted";

  /** The condition's reason and the Warning event's. */
  static final String EVENT_REASON = "SlotRecordNotOurs";

  /** A fixed text: nothing of the foreign record is echoed. */
  static final String REFUSED =
      "status.stream.slot names a replication slot that the operator did not record as created for"
          + " this filter (not the slot of its open stream, nor the one the published version's"
          + " build record names): the status was written by someone else. That slot is neither"
          + " read nor dropped; the operator uses only its own record";

  private final OwnManifests ownManifests;
  private final ChangeStreams streams;

  OwnSlots(OwnManifests ownManifests, ChangeStreams streams) {
    this.ownManifests = ownManifests;
    this.streams = streams;
  }

  /**
   * The slot the operator vouches for as {@code filter}'s ({@code <system
   * identifier>/<database>/<slot>}), or null: the open stream's; else, when the status records a
   * slot at all, the one the trusted build record names (one GET of the manifest ConfigMap). A
   * status without a record gets none from the build record: the operator clears the record when it
   * drops the slot, and the build record keeps the last slot named.
   */
  String vouched(BloomFilter filter, KubernetesClient client, Instant now) {
    Optional<ChangeStream> open = streams.stream(filter.getMetadata().getUid());
    if (open.isPresent()) {
      StreamStatus held = new StreamStatus();
      open.get().describe(held);
      if (held.getSlot() != null) {
        return held.getSlot();
      }
    }
    if (recorded(filter) == null) {
      return null;
    }
    PublishedSnapshot published;
    try {
      published = new SnapshotStore(client, filter, null).read();
    } catch (PublishException e) {
      return null; // the manifest's name is someone else's ConfigMap: nothing of ours records one
    }
    PublishedSnapshot usable = ownManifests.check(filter, published, now).usable();
    return usable == null || usable.manifest() == null ? null : usable.streamSlot();
  }

  /**
   * {@code filter} as its stream may be opened and its former slot dropped: its status naming only
   * the slot the operator vouches for. A record that is not that one is refused into {@code draft}
   * (condition False, and a Warning event when it turns False); the condition stays for the
   * generation (the operator replaces the record, so the next reconcile finds none) and goes with a
   * spec change or once a record is trusted.
   */
  BloomFilter checked(
      BloomFilter filter,
      KubernetesClient client,
      DraftStatus draft,
      EventRecorder events,
      Instant now) {
    String recorded = recorded(filter);
    if (recorded == null) {
      if (!draft.problemOfThisGeneration(CONDITION)) {
        draft.problem(CONDITION, EVENT_REASON, null);
      }
      return filter;
    }
    String vouched = vouched(filter, client, now);
    if (recorded.equals(vouched)) {
      draft.problem(CONDITION, EVENT_REASON, null);
      return filter;
    }
    if (draft.problem(CONDITION, EVENT_REASON, REFUSED)) {
      events.warning(filter, EVENT_REASON, REFUSED);
    }
    return withRecord(filter, vouched);
  }

  /** The slot {@code filter}'s status records, or null. */
  static String recorded(BloomFilter filter) {
    BloomFilterStatus status = filter.getStatus();
    return status == null || status.getStream() == null ? null : status.getStream().getSlot();
  }

  /** A copy of {@code filter} whose status records {@code slot} (null: none). */
  static BloomFilter withRecord(BloomFilter filter, String slot) {
    BloomFilter copy = Serialization.clone(filter);
    if (copy.getStatus() == null) {
      copy.setStatus(new BloomFilterStatus());
    }
    if (copy.getStatus().getStream() == null) {
      copy.getStatus().setStream(new StreamStatus());
    }
    copy.getStatus().getStream().setSlot(slot);
    return copy;
  }
}
