package io.bloomoperator.changes;

import java.time.Instant;
import java.util.List;

/**
 * A source of key events for one filter, read from positions the published versions record. The
 * stream's own place is only a cache: every {@link #read} says where to read from, so a publish
 * that failed is simply read again (adds are applied at least once; applying an add twice is
 * harmless).
 */
public interface ChangeStream extends AutoCloseable {

  /**
   * The position of the first event at or after {@code time}, in every partition (the end, where
   * none is): a full build starting at {@code time} resumes the stream there.
   */
  StreamPosition positionAt(Instant time) throws StreamException;

  /**
   * Where a full build whose scan starts at {@code scanStart} resumes the stream, and the snapshot
   * (if any) its scan must read in for nothing to fall between the scan and the stream. The default
   * is {@link #positionAt}, for streams whose position a time alone makes consistent (Kafka, with
   * the overlap). Close the answer once the scan is done.
   */
  default ScanStart scanStart(Instant scanStart) throws StreamException {
    return ScanStart.at(positionAt(scanStart));
  }

  /**
   * The events from {@code from} on, as many as arrive within the read time and byte bound.
   *
   * @throws StreamException of kind {@link StreamException.Kind#POSITION_LOST} when {@code from} is
   *     no longer in the stream (retention passed it): only a full build catches up
   */
  Batch read(StreamPosition from) throws StreamException;

  /**
   * {@link #read(StreamPosition)}, collecting at most {@code maxKeyBytes} of keys (as {@link
   * StreamLimits#keyBytes} counts them; at least one key is always collected): what the read
   * reserved of the operator's read heap. A stream that collects keys must honour it; the default
   * is for streams whose reads are small anyway (tests).
   */
  default Batch read(StreamPosition from, long maxKeyBytes) throws StreamException {
    return read(from);
  }

  /**
   * Writes what the stream holds outside the operator into {@code status}: a PostgreSQL stream's
   * replication slot and the log it retains. Nothing for streams that hold nothing.
   */
  default void describe(io.bloomoperator.api.StreamStatus status) {}

  /** Releases the stream's connections and threads. */
  @Override
  void close();

  /**
   * What one read found.
   *
   * @param adds the keys to add, in stream order (as text; a Long key as its decimal digits)
   * @param deletes delete events read (applied by the next full build, or counted)
   * @param deleted the delete events whose key and place the stream knows, in stream order (a
   *     counting shadow applies them; the others wait for the next full build)
   * @param unorderedAdds adds whose place does not show that every event of their key is in one
   *     partition (Kafka: the record key is not the ID, or the partition not the default
   *     partitioner's): a counting shadow cannot order this key's deletes after them, and stops
   * @param malformed events that were not of the configured format
   * @param next the position after the last event read
   * @param lag events known to be in the stream after {@code next} (-1: not known yet)
   * @param oldest the time of the oldest event read, as the stream recorded it (its producer's
   *     clock); null when none was read or none has a time
   */
  record Batch(
      List<String> adds,
      long deletes,
      List<CountingShadow.Deletion> deleted,
      long unorderedAdds,
      long malformed,
      StreamPosition next,
      long lag,
      Instant oldest) {

    /** A batch whose deletes are only counted (a stream that does not decode their keys). */
    public Batch(
        List<String> adds,
        long deletes,
        long malformed,
        StreamPosition next,
        long lag,
        Instant oldest) {
      this(adds, deletes, List.of(), 0, malformed, next, lag, oldest);
    }

    /** Whether anything was read. */
    public boolean empty() {
      return adds.isEmpty() && deletes == 0 && malformed == 0;
    }
  }
}
