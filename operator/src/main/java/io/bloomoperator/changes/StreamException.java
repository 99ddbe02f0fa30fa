package io.bloomoperator.changes;

/**
 * A stream could not be read. The message is the operator's own text (a setting, a count, a fixed
 * reason), never bytes of an event or of the broker's answers, so it is safe for status and events.
 */
public final class StreamException extends Exception {

  /** What the operator does about it. */
  public enum Kind {
    /** The spec or the topic is outside what the operator reads (fix the spec or the topic). */
    REFUSED,
    /** The resume position is gone (retention passed it): only a full build catches up. */
    POSITION_LOST,
    /** The broker did not answer in time, or refused; retried with backoff. */
    UNAVAILABLE
  }

  private final Kind kind;

  public StreamException(Kind kind, String message) {
    super(message);
    this.kind = kind;
  }

  public StreamException(Kind kind, String message, Throwable cause) {
    super(message, cause);
    this.kind = kind;
  }

  public Kind kind() {
    return kind;
  }

  /**
   * The kind as a metric tag value: {@code refused}, {@code position_lost}, {@code unavailable}.
   */
  public String tag() {
    return kind.name().toLowerCase(java.util.Locale.ROOT);
  }
}
