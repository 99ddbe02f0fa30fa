package io.bloomoperator.lookup;

/** A request answered with an error status; the message is the body's {@code error}. */
final class LookupException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final int status;

  LookupException(int status, String message) {
    super(message, null, false, false); // a client error, not a bug: no stack trace to fill
    this.status = status;
  }

  static LookupException badRequest(String message) {
    return new LookupException(400, message);
  }

  static LookupException tooLarge(String message) {
    return new LookupException(413, message);
  }

  int status() {
    return status;
  }
}
