package io.bloomoperator.changes;

import io.bloomoperator.api.ChangesSpec;
import java.time.Instant;

/** One filter's change stream, as one reconcile uses it. */
public final class FilterChanges {

  private final ChangesSpec spec;
  private final ChangeStream stream;

  FilterChanges(ChangesSpec spec, ChangeStream stream) {
    this.spec = spec;
    this.stream = stream;
  }

  /** The filter's {@code spec.changes}. */
  public ChangesSpec spec() {
    return spec;
  }

  /**
   * Where a full build whose scan starts at {@code scanStart} resumes the stream: at the events of
   * {@code spec.changes.overlap} before it, so an event written to the stream before its key was
   * committed to the source (and so missed by the scan) is read again.
   */
  public StreamPosition startFor(Instant scanStart) throws StreamException {
    return stream.positionAt(scanStart.minus(spec.overlapInterval()));
  }

  /** The events after {@code from}. */
  public ChangeStream.Batch read(StreamPosition from) throws StreamException {
    return stream.read(from);
  }
}
