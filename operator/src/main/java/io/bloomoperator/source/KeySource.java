package io.bloomoperator.source;

/**
 * Where a filter's keys come from. A source streams its keys; it never hands out the whole key
 * list, so a build holds the bit array and not the keys. Sources are re-readable: sizing from the
 * actual key count may read one twice.
 */
public interface KeySource {

  /** Human-readable description for conditions, events and logs, e.g. "configMap ids/ids.txt". */
  String description();

  /**
   * A cheap token that changes whenever the content may have changed (a resourceVersion, an ETag),
   * or {@code null} when the source cannot tell, in which case every refresh rebuilds.
   */
  String changeToken() throws SourceException;

  /** Streams every key of the source to the sink, in source order. */
  void readKeys(KeySink sink) throws SourceException;

  /**
   * Ends a {@link #readKeys} under way on another thread as soon as possible (it then throws), so a
   * build the operator stops is not left blocked on a server that sends nothing. Called from
   * another thread, possibly when no read is under way; must not block for long. Sources that never
   * block on a remote party (inline, in-cluster objects) need not implement it.
   */
  default void cancel() {}
}
