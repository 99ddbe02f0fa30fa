package io.bloomoperator.source;

import io.bloomoperator.api.Reasons;
import io.fabric8.kubernetes.api.model.Secret;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

/**
 * A database user and password. {@link #toString()} never shows the password, so the record can not
 * leak it into a log or message by accident.
 */
record JdbcCredentials(String username, String password) {

  static final String USERNAME_KEY = "username";
  static final String PASSWORD_KEY = "password";

  /** Reads a credentials source; {@code null} means the URL carries whatever is needed. */
  @FunctionalInterface
  interface Lookup {
    JdbcCredentials get() throws SourceException;
  }

  @Override
  public String toString() {
    return "JdbcCredentials[username=" + username + ", password=***]";
  }

  /**
   * The keys {@code username} and {@code password} of a Secret that allows them to be sent to
   * {@code host:port} ({@link SecretAccess}). One trailing newline is dropped from each (the usual
   * artefact of {@code echo ... | base64}); nothing else is trimmed.
   */
  static JdbcCredentials fromSecret(SecretAccess secrets, String name, String host, int port)
      throws SourceException {
    Secret secret = secrets.forSending(name, "source.jdbc.credentialsSecret", host, port);
    return new JdbcCredentials(key(secret, name, USERNAME_KEY), key(secret, name, PASSWORD_KEY));
  }

  private static String key(Secret secret, String name, String key) throws SourceException {
    Map<String, String> data = secret.getData();
    String encoded = data == null ? null : data.get(key);
    if (encoded == null) {
      throw new SourceException(
          Reasons.SOURCE_KEY_NOT_FOUND,
          "Secret "
              + name
              + " has no key "
              + key
              + " (expected keys "
              + USERNAME_KEY
              + " and "
              + PASSWORD_KEY
              + ")");
    }
    String value;
    try {
      value = new String(Base64.getDecoder().decode(encoded), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw new SourceException(
          Reasons.SOURCE_UNREADABLE, "Secret " + name + " key " + key + " is not valid base64");
    }
    if (value.endsWith("\r\n")) {
      return value.substring(0, value.length() - 2);
    }
    return value.endsWith("\n") ? value.substring(0, value.length() - 1) : value;
  }
}
