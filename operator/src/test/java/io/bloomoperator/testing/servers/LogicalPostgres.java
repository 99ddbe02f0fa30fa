package io.bloomoperator.testing.servers;

/**
 * The PostgreSQL server of this JVM for logical replication tests: a {@link
 * PostgresServer#dedicated} one started with {@code wal_level = logical} (the shared server cannot
 * be restarted with it), with a role {@link #ROLE} that has REPLICATION and one {@link
 * #ROLE_WITHOUT_REPLICATION} that has not, both with password {@link #PASSWORD}.
 */
public final class LogicalPostgres {

  public static final String ROLE = "bloom_repl";
  public static final String ROLE_WITHOUT_REPLICATION = "bloom_norepl";
  public static final String PASSWORD = "Repl-s3cret";

  private static PostgresServer server;

  private LogicalPostgres() {}

  /** The server, started on first call and stopped at JVM exit. */
  public static synchronized PostgresServer shared() {
    if (server == null) {
      server = PostgresServer.dedicated("wal_level=logical", "max_replication_slots=32");
      server.executeAsSuperuser(
          "CREATE ROLE " + ROLE + " LOGIN REPLICATION PASSWORD '" + PASSWORD + "'",
          "CREATE ROLE " + ROLE_WITHOUT_REPLICATION + " LOGIN PASSWORD '" + PASSWORD + "'");
    }
    return server;
  }
}
