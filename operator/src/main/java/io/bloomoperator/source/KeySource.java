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
}
