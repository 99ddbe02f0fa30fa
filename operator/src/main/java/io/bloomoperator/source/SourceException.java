package io.bloomoperator.source;

/**
 * A source that cannot deliver its keys. The reason becomes the Ready condition's reason, so it is
 * a CamelCase word that users can match on; the message says what to fix.
 */
public class SourceException extends Exception {

  private final String reason;

  public SourceException(String reason, String message) {
    super(message);
    this.reason = reason;
  }

  public SourceException(String reason, String message, Throwable cause) {
    super(message, cause);
    this.reason = reason;
  }

  /** The condition reason, one of {@link io.bloomoperator.api.Reasons}. */
  public String reason() {
    return reason;
  }
}
