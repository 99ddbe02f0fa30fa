package io.bloomoperator.testing.servers;

import io.bloomoperator.source.SecretAccess;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The PostgreSQL server of this JVM for logical replication tests: a {@link
 * PostgresServer#dedicated} one started with {@code wal_level = logical} (the shared server cannot
 * be restarted with it), with a role {@link #ROLE} that has REPLICATION and one {@link
 * #ROLE_WITHOUT_REPLICATION} that has not, both with password {@link #PASSWORD}. TLS is on, so
 * clients speak TLS unless their URL says {@code sslmode=disable} (both paths are tested).
 */
public final class LogicalPostgres {

  public static final String ROLE = "bloom_repl";
  public static final String ROLE_WITHOUT_REPLICATION = "bloom_norepl";
  public static final String PASSWORD = "Repl-s3cret";

  private static PostgresServer server;

  private LogicalPostgres() {}

  /** Whether the server has a replication slot named {@code slot}. */
  public static boolean slotExists(String slot) throws java.sql.SQLException {
    try (java.sql.Connection c = shared().connect();
        java.sql.PreparedStatement s =
            c.prepareStatement("SELECT count(*) FROM pg_replication_slots WHERE slot_name = ?")) {
      s.setString(1, slot);
      try (java.sql.ResultSet r = s.executeQuery()) {
        r.next();
        return r.getInt(1) == 1;
      }
    }
  }

  /**
   * A new table {@code <prefix><unique>_products} on the shared server with rows {@code sku-1} to
   * {@code sku-3} in its text key column {@code id}, readable by {@link #ROLE}, and a publication
   * {@code pub_<table>} of that column: what a {@code postgresLogical} stream of a test reads.
   *
   * @return the table's name
   */
  public static String publishedTable(String prefix) throws java.sql.SQLException {
    String table = prefix + Long.toString(System.nanoTime() % 1_000_000_000L, 36) + "_products";
    PostgresServer pg = shared();
    pg.execute(
        "CREATE TABLE " + table + " (id text PRIMARY KEY, note text)",
        "INSERT INTO " + table + " SELECT 'sku-' || g, 'x' FROM generate_series(1, 3) g",
        "GRANT SELECT ON " + table + " TO " + ROLE);
    pg.executeAsSuperuser("CREATE PUBLICATION pub_" + table + " FOR TABLE " + table + " (id)");
    return table;
  }

  /**
   * A Secret {@code name} in {@code namespace} with {@link #ROLE}'s credentials, which lets every
   * filter of the namespace send them to this server.
   */
  public static void replicationSecret(KubernetesClient client, String namespace, String name) {
    replicationSecret(client, namespace, name, shared());
  }

  /** {@link #replicationSecret(KubernetesClient, String, String)} for {@code server}. */
  public static void replicationSecret(
      KubernetesClient client, String namespace, String name, PostgresServer server) {
    client
        .secrets()
        .inNamespace(namespace)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(namespace)
                .addToAnnotations(SecretAccess.ALLOWED_FILTERS, "*")
                .addToAnnotations(SecretAccess.ALLOWED_HOSTS, "127.0.0.1:" + server.port())
                .endMetadata()
                .withStringData(Map.of("username", ROLE, "password", PASSWORD))
                .build())
        .serverSideApply();
  }

  /** The server, started on first call and stopped at JVM exit. */
  public static synchronized PostgresServer shared() {
    if (server == null) {
      server = startDedicated();
    }
    return server;
  }

  /**
   * A server set up like {@link #shared()} but of the caller's own (e.g. to restart it), stopped by
   * its {@link PostgresServer#close()} or at JVM exit.
   */
  public static PostgresServer startDedicated() {
    return setUp(PostgresServer.dedicated("wal_level=logical", "max_replication_slots=32"));
  }

  /**
   * A server set up like {@link #shared()} on {@code dir}, kept across runs ({@link
   * PostgresServer#persistent}), with the extra {@code -c} settings {@code settings}.
   */
  public static PostgresServer startPersistent(Path dir, String... settings) {
    List<String> all = new ArrayList<>(List.of("wal_level=logical", "max_replication_slots=32"));
    all.addAll(List.of(settings));
    PostgresServer started = PostgresServer.persistent(dir, all.toArray(String[]::new));
    return started.reused() ? started : setUp(started);
  }

  private static PostgresServer setUp(PostgresServer started) {
    started.executeAsSuperuser(
        "CREATE ROLE " + ROLE + " LOGIN REPLICATION PASSWORD '" + PASSWORD + "'",
        "CREATE ROLE " + ROLE_WITHOUT_REPLICATION + " LOGIN PASSWORD '" + PASSWORD + "'");
    started.enableTls();
    return started;
  }
}
