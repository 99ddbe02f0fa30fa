package io.bloomoperator.source;

/**
 * A database user and password. {@link #toString()} never shows the password, so the record can not
 * leak it into a log or message by accident.
 */
record JdbcCredentials(String username, String password) {

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
   * {@code host:port} ({@link UserPassword#fromSecret}).
   */
  static JdbcCredentials fromSecret(SecretAccess secrets, String name, String host, int port)
      throws SourceException {
    UserPassword user =
        UserPassword.fromSecret(secrets, name, "source.jdbc.credentialsSecret", host, port);
    return new JdbcCredentials(user.username(), user.password());
  }
}
