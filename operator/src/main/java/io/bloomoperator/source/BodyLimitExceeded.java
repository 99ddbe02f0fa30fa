package io.bloomoperator.source;

import java.io.IOException;

/**
 * A body broke one of the limits an administrator set on what one source may cost. The message is
 * fixed text and numbers, never content of the body.
 */
final class BodyLimitExceeded extends IOException {

  /** The environment variable that sets the limit, for the message. */
  private final String setting;

  BodyLimitExceeded(String message, String setting) {
    super(message);
    this.setting = setting;
  }

  String setting() {
    return setting;
  }
}
