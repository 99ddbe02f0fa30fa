package io.bloomoperator.cli;

/**
 * A failure the user can act on (unreadable input, failed verification, missing ConfigMap): printed
 * as one line on stderr, exit code {@value BloomCli#EXIT_FAILURE}.
 */
public final class CliException extends Exception {

  public CliException(String message) {
    super(message);
  }

  public CliException(String message, Throwable cause) {
    super(message, cause);
  }
}
