package io.bloomoperator.source;

/**
 * A source that cannot deliver its keys. The reason becomes the Ready condition's reason, so it is
 * a CamelCase word that users can match on; the message says what to fix.
 */
public class SourceException extends Exception {

  /** The object named by the source does not exist (yet). */
  public static final String NOT_FOUND = "SourceNotFound";
  /** The object exists but lacks the named key. */
  public static final String KEY_NOT_FOUND = "SourceKeyNotFound";
  /** The source could not be read (permissions, I/O, bad encoding). */
  public static final String UNREADABLE = "SourceUnreadable";
  /** Too many lines are not keys of the declared type. */
  public static final String MALFORMED_KEYS = "MalformedKeys";

  private final String reason;

  public SourceException(String reason, String message) {
    super(message);
    this.reason = reason;
  }

  public SourceException(String reason, String message, Throwable cause) {
    super(message, cause);
    this.reason = reason;
  }

  /** The condition reason. */
  public String reason() {
    return reason;
  }
}
