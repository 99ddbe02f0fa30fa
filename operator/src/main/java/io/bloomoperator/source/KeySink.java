package io.bloomoperator.source;

/** Receives the keys a {@link KeySource} streams. */
public interface KeySink {

  /**
   * One line of text as the source holds it. Text sources share one set of rules (trim, skip blank
   * lines and {@code #} comments, parse per key type), implemented by {@link LineParser}.
   */
  void line(String rawLine) throws SourceException;

  /**
   * Consecutive lines of a text body in bulk, in source order: the same as {@link #line} for each
   * {@link LineBlock#line(int)}, which is what this default does. Sinks that can parse bytes
   * override it to make no {@code String} per line. The sink may keep the block.
   */
  default void lines(LineBlock block) throws SourceException {
    for (int i = 0; i < block.count(); i++) {
      line(block.line(i));
    }
  }

  /**
   * A typed value from a structured source (e.g. a text column): taken as it is, no line rules; for
   * Long filters it must be a decimal integer, else it counts as malformed.
   */
  void value(String key) throws SourceException;

  /** A typed integer value from a structured source (e.g. a bigint column). */
  void value(long key) throws SourceException;

  /** A structured source produced SQL NULL (or the like): counted, not inserted. */
  void nullValue();

  /**
   * For a source that reads on several threads at once: lanes through which each of them puts its
   * keys into what this sink feeds, on its own thread ({@link KeyLanes}: when to ask, and the
   * rules); null (this default) when this sink takes keys on the calling thread only. A sink that
   * wraps another and sees every key passes the question on and wraps what it gets, or the source's
   * keys would bypass it; one that returns null keeps every key on the build's thread.
   */
  default KeyLanes lanes() {
    return null;
  }
}
