package io.bloomoperator.changes;

import io.bloomoperator.api.ChangesSpec;
import java.time.Instant;
import java.util.Optional;

/**
 * One filter's change stream, as one reconcile uses it: every read goes through the filter's
 * backoff, its namespace's read places and the operator's read heap ({@link StreamReads}), so what
 * one tenant's stream costs the threads and the heap every tenant shares stays within its share.
 */
public final class FilterChanges {

  private final ChangesSpec spec;
  private final ChangeStream stream;
  private final String uid;
  private final String namespace;
  private final StreamReads reads;

  FilterChanges(
      ChangesSpec spec, ChangeStream stream, String uid, String namespace, StreamReads reads) {
    this.spec = spec;
    this.stream = stream;
    this.uid = uid;
    this.namespace = namespace;
    this.reads = reads;
  }

  /** Writes what the stream holds outside the operator into {@code status} (its slot, its log). */
  public void describe(io.bloomoperator.api.StreamStatus status) {
    stream.describe(status);
  }

  /**
   * The replication slot the stream created, or was opened with as the operator's own ({@code
   * <system identifier>/<database>/<slot>}); null for none (or a stream without slots): what the
   * next published version records as the filter's slot.
   */
  public String slot() {
    io.bloomoperator.api.StreamStatus held = new io.bloomoperator.api.StreamStatus();
    stream.describe(held);
    return held.getSlot();
  }

  /** The filter's {@code spec.changes}. */
  public ChangesSpec spec() {
    return spec;
  }

  /**
   * Until when the stream is left alone after failures; empty when it may be asked at {@code now}.
   */
  public Optional<Instant> waiting(Instant now) {
    return reads.backoff().waiting(uid, now);
  }

  /**
   * Reads of this stream wait until {@code until} (empty: the budget never has room for what was
   * refused; then for {@link #NEVER_FITS_WAIT}): its last publish was refused by a write budget.
   */
  public void waitForBudget(Optional<Instant> until, Instant now) {
    reads.backoff().waitForBudget(uid, until.orElse(now.plus(NEVER_FITS_WAIT)));
  }

  /** How long a stream whose publish can never fit waits before it tries again. */
  static final java.time.Duration NEVER_FITS_WAIT = java.time.Duration.ofMinutes(5);

  /**
   * Where a full build whose scan starts at {@code scanStart} resumes the stream, and how the scan
   * must read to be consistent with it ({@link ChangeStream#scanStart}): Kafka, at the events of
   * {@code spec.changes.overlap} before it, so an event written to the stream before its key was
   * committed to the source (and so missed by the scan) is read again; PostgreSQL, at a replication
   * slot's consistent point, the scan reading in the snapshot the slot exported. Asked on the
   * build's thread, which its namespace's build place already bounds, without a read place; a
   * failure counts for the backoff like a read's. Close the answer once the scan is done.
   *
   * @throws StreamException also, of kind UNAVAILABLE, while the stream is left alone after
   *     failures
   */
  public ScanStart startFor(Instant scanStart, Instant now) throws StreamException {
    Optional<Instant> until = waiting(now);
    if (until.isPresent()) {
      throw new StreamException(
          StreamException.Kind.UNAVAILABLE,
          "the stream failed lately and is not asked again before " + until.get());
    }
    try {
      ScanStart start = stream.scanStart(scanStart.minus(spec.overlapInterval()));
      reads.backoff().succeeded(uid);
      return start;
    } catch (StreamException e) {
      reads.backoff().failed(uid, spec.publishInterval(), now, e.kind());
      throw e;
    }
  }

  /**
   * {@link #startFor} on a reconcile that holds no build place: within the namespace's read places
   * and the backoff, reported like a read.
   */
  public StreamRead<StreamPosition> probeStart(Instant scanStart, Instant now) {
    return reads.ask(
        uid,
        namespace,
        spec.publishInterval(),
        now,
        false,
        bytes -> stream.positionAt(scanStart.minus(spec.overlapInterval())));
  }

  /**
   * The events after {@code from}, read within the backoff, a read place and a reservation of the
   * read heap; the keys collected are bounded by that reservation. Close the answer once its keys
   * are published.
   */
  public StreamRead<ChangeStream.Batch> read(StreamPosition from, Instant now) {
    return reads.ask(
        uid, namespace, spec.publishInterval(), now, true, keyBytes -> stream.read(from, keyBytes));
  }
}
