package io.bloomoperator.reconcile;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.backend.SnapshotBackends;
import io.bloomoperator.changes.StreamException;
import io.bloomoperator.events.EventRecorder;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.PrimaryUpdateAndCacheUtils;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A PostgreSQL replication slot makes the database keep its write-ahead log until it is read: one
 * left behind by a deleted filter would fill the database's disk. Every filter with {@code
 * spec.changes.postgresLogical} gets this finalizer before its slot is created; when the filter is
 * deleted, the slot it recorded is dropped, then the finalizer removed. It never blocks a deletion
 * for ever: while the database cannot be reached it retries, and after {@link #GIVE_UP} it lets the
 * deletion proceed with a Warning event that names the slot to drop by hand. The deletion then goes
 * on to the snapshot backends' finalizer ({@link SnapshotBackends#finish}): one call finishes a
 * deletion.
 */
final class SlotFinalizer {

  /** Put on filters with a PostgreSQL change stream. */
  static final String NAME = "bloomoperator.io/replication-slot";

  static final String EVENT_SLOT_ABANDONED = "ReplicationSlotAbandoned";

  /** How long a deletion waits for the database before the slot is left to the user. */
  static final Duration GIVE_UP = Duration.ofMinutes(10);

  private static final Duration RETRY = Duration.ofSeconds(10);

  private static final Logger LOG = LoggerFactory.getLogger(SlotFinalizer.class);

  private final FilterRuns runs;
  private final SnapshotBackends backends;

  SlotFinalizer(FilterRuns runs, SnapshotBackends backends) {
    this.runs = runs;
    this.backends = backends;
  }

  /**
   * {@code filter} with the finalizer when it has a PostgreSQL stream (added when missing): called
   * before its stream is opened, so no slot exists without the finalizer that drops it.
   */
  static BloomFilter ensure(BloomFilter filter, Context<BloomFilter> context) {
    boolean streams =
        filter.getSpec() != null
            && filter.getSpec().getChanges() != null
            && filter.getSpec().getChanges().getPostgresLogical() != null;
    if (!streams || filter.hasFinalizer(NAME)) {
      return filter;
    }
    return PrimaryUpdateAndCacheUtils.addFinalizer(context, NAME);
  }

  /**
   * The deletion of {@code filter}: its slot dropped, then the finalizer removed, then the snapshot
   * backends' deletion; what to return from the reconcile.
   */
  UpdateControl<BloomFilter> finish(
      BloomFilter filter, Context<BloomFilter> context, EventRecorder events, Instant now) {
    if (!filter.hasFinalizer(NAME)) {
      return backends.finish(filter, context, events, now);
    }
    String failure;
    try {
      if (runs.dropSlot(filter, context.getClient(), events, now)) {
        PrimaryUpdateAndCacheUtils.removeFinalizer(context, NAME);
        return backends.finish(filter, context, events, now);
      }
      failure = "the slot was not dropped";
    } catch (StreamException e) {
      failure = e.getMessage();
    } catch (RuntimeException e) {
      // E.g. a spec that lost its jdbc source: the deletion must still end, after GIVE_UP.
      failure = "the slot could not be reached (" + e.getClass().getSimpleName() + ")";
    }
    LOG.warn(
        "{}/{}: replication slot not dropped yet: {}",
        filter.getMetadata().getNamespace(),
        filter.getMetadata().getName(),
        failure);
    if (!expired(filter, now)) {
      return UpdateControl.<BloomFilter>noUpdate().rescheduleAfter(RETRY);
    }
    events.warning(
        filter,
        EVENT_SLOT_ABANDONED,
        "the replication slot spec.changes.postgresLogical.slot could not be dropped within "
            + GIVE_UP.toMinutes()
            + " minutes ("
            + failure
            + "); the deletion proceeds. Drop it by hand (SELECT pg_drop_replication_slot(...)):"
            + " until then the database keeps its write-ahead log");
    PrimaryUpdateAndCacheUtils.removeFinalizer(context, NAME);
    return backends.finish(filter, context, events, now);
  }

  private static boolean expired(BloomFilter filter, Instant now) {
    String since = filter.getMetadata().getDeletionTimestamp();
    return since != null && !now.isBefore(OffsetDateTime.parse(since).toInstant().plus(GIVE_UP));
  }
}
