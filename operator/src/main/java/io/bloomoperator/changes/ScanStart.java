package io.bloomoperator.changes;

import io.bloomoperator.source.ExportedSnapshot;
import java.util.Optional;

/**
 * Where a full build resumes its change stream, and how its scan must read the source to be
 * consistent with that position: for a PostgreSQL stream, in the snapshot the replication slot
 * exported at its consistent point (every transaction committed before the position is in the
 * snapshot, every one committed after it is in the stream). Close it once the scan is done: that
 * ends the connection holding the snapshot (and a temporary slot with it).
 */
public final class ScanStart implements AutoCloseable {

  private final StreamPosition position;
  private final ExportedSnapshot snapshot;
  private final Runnable release;
  private boolean closed;

  private ScanStart(StreamPosition position, ExportedSnapshot snapshot, Runnable release) {
    this.position = position;
    this.snapshot = snapshot;
    this.release = release;
  }

  /** A position any scan starting now is consistent with (Kafka: {@code overlap} before it). */
  public static ScanStart at(StreamPosition position) {
    return new ScanStart(position, null, () -> {});
  }

  /**
   * {@code position}, consistent only with a scan that reads in {@code snapshot}; {@code release}
   * ends what holds the snapshot, once, on {@link #close}.
   */
  public static ScanStart inSnapshot(
      StreamPosition position, ExportedSnapshot snapshot, Runnable release) {
    return new ScanStart(position, snapshot, release);
  }

  /** No position: the build is published without one, and the stream waits for the next. */
  public static ScanStart none() {
    return new ScanStart(null, null, () -> {});
  }

  /** The position the build records, or empty. */
  public Optional<StreamPosition> position() {
    return Optional.ofNullable(position);
  }

  /** The snapshot the scan must read in for {@link #position} to hold, or empty: any. */
  public Optional<ExportedSnapshot> snapshot() {
    return Optional.ofNullable(snapshot);
  }

  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      release.run();
    }
  }
}
