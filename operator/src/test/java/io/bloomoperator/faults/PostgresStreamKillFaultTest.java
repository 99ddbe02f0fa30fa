package io.bloomoperator.faults;

import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.servers.LogicalPostgres;
import io.bloomoperator.testing.servers.PostgresServer;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Fault 12 of docs/reliability.md with PostgreSQL logical replication ({@code
 * spec.changes.postgresLogical}) on a server of the test's own, crashed and restarted under the
 * running operator ({@code pg_ctl stop -m immediate}: crash recovery at start; the slot's confirmed
 * position may go back to its last checkpoint, so some events are read twice): {@link
 * StreamKillScenario}. A key is acknowledged when its INSERT committed with {@code
 * synchronous_commit = on}.
 */
@Tag("fault")
@RealKubernetes(crdDirs = "crds")
class PostgresStreamKillFaultTest {

  private static final String TABLE = "stream_keys";

  @Test
  void sigkilledOperatorAndCrashedPostgresLoseNoStreamedKey(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) throws Exception {
    StreamKillScenario.run(new LogicalStream(), client, ns, cluster);
  }

  private static final class LogicalStream implements StreamUnderTest {
    private final PostgresServer pg = LogicalPostgres.startDedicated();

    @Override
    public String name() {
      return "pg-stream-kill";
    }

    @Override
    public Map<String, String> operatorEnv() {
      return Map.of();
    }

    @Override
    public void prepare(KubernetesClient client, String namespace) {
      pg.execute(
          "CREATE TABLE " + TABLE + " (id text PRIMARY KEY)",
          "INSERT INTO " + TABLE + " VALUES ('seed-a'), ('seed-b')",
          "GRANT SELECT ON " + TABLE + " TO " + LogicalPostgres.ROLE);
      pg.executeAsSuperuser("CREATE PUBLICATION pub_keys FOR TABLE " + TABLE + " (id)");
      LogicalPostgres.replicationSecret(client, namespace, "pg-repl", pg);
    }

    @Override
    public String sourceAndChanges() {
      return """
          source:
            jdbc:
              url: %s
              query: select id from %s
              credentialsSecret: pg-repl
          changes:
            publishEvery: 1s
            postgresLogical:
              publication: pub_keys
              slot: slot_stream_keys
              keyColumn: id
          """
          .formatted(pg.url(), TABLE);
    }

    @Override
    public KeyWriter writer(int perSecond) {
      return new Inserts(pg, perSecond);
    }

    @Override
    public void restart() {
      pg.restart();
    }

    @Override
    public void close() {
      pg.close();
    }
  }

  /**
   * One INSERT per key in its own transaction; a key is acknowledged once its commit returned. A
   * failed write (the server down) is counted and the connection opened again for the next key.
   */
  private static final class Inserts extends StreamUnderTest.PacedKeyWriter {
    private final PostgresServer pg;
    private Connection connection;
    private PreparedStatement insert;

    Inserts(PostgresServer pg, int perSecond) {
      super(perSecond, "pg-stream-kill-writer");
      this.pg = pg;
    }

    @Override
    void send(String key) {
      try {
        if (insert == null) {
          connection = pg.connect();
          try (Statement s = connection.createStatement()) {
            // The server runs with synchronous_commit=off: a commit acknowledged before its WAL is
            // written could be lost by the crash, which would be the test's loss, not the stream's.
            s.execute("SET synchronous_commit = on");
          }
          insert = connection.prepareStatement("INSERT INTO " + TABLE + " VALUES (?)");
        }
        insert.setString(1, key);
        insert.executeUpdate();
        acknowledged(key, "committed");
      } catch (SQLException e) {
        failedOnce();
        closeConnection();
      }
    }

    private void closeConnection() {
      try {
        if (connection != null) {
          connection.close();
        }
      } catch (SQLException ignored) {
        // the server is gone; the next key opens a new connection
      }
      connection = null;
      insert = null;
    }

    @Override
    public void close() throws Exception {
      super.close();
      closeConnection();
    }
  }
}
