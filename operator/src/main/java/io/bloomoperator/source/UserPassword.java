package io.bloomoperator.source;

import io.bloomoperator.api.Reasons;
import io.fabric8.kubernetes.api.model.Secret;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

/**
 * A user name and password from a Secret's keys {@code username} and {@code password}, for a server
 * the Secret allows them to be sent to ({@link SecretAccess#forSending}). {@link #toString()} never
 * shows the password, so the record cannot leak it into a log or message by accident.
 */
public record UserPassword(String username, String password) {

  static final String USERNAME_KEY = "username";
  static final String PASSWORD_KEY = "password";

  @Override
  public String toString() {
    return "UserPassword[username=" + username + ", password=***]";
  }

  /**
   * The keys {@code username} and {@code password} of Secret {@code name}, which must allow them to
   * be sent to {@code host:port}. One trailing newline is dropped from each (the usual artefact of
   * {@code echo ... | base64}); nothing else is trimmed.
   *
   * @param field the spec field naming the Secret, for messages
   */
  public static UserPassword fromSecret(
      SecretAccess secrets, String name, String field, String host, int port)
      throws SourceException {
    return of(secrets.forSending(name, field, host, port), name);
  }

  /** The keys {@code username} and {@code password} of {@code secret}, named {@code name}. */
  public static UserPassword of(Secret secret, String name) throws SourceException {
    return new UserPassword(key(secret, name, USERNAME_KEY), key(secret, name, PASSWORD_KEY));
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
