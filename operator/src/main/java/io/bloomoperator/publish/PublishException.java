package io.bloomoperator.publish;

/**
 * A snapshot could not be published. Whatever the attempt created has been removed again, and the
 * previously published version is untouched.
 */
public class PublishException extends Exception {

  private final String reason;

  public PublishException(String reason, String message, Throwable cause) {
    super(message, cause);
    this.reason = reason;
  }

  /** The condition reason, one of {@link io.bloomoperator.api.Reasons}. */
  public String reason() {
    return reason;
  }
}
