package io.bloomoperator.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.api.JdbcSourceSpec;
import io.bloomoperator.snapshot.KeyType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hostile MySQL-protocol server asks each MySQL-protocol driver for a local file (as the
 * operator's service-account token would be asked for): the file's bytes never arrive, with or
 * without hostile URL parameters, which are refused before any connection.
 */
class JdbcRogueServerTest {

  @TempDir Path dir;
  private Path marker;
  private String secret;

  @BeforeEach
  void createMarker() throws Exception {
    secret = "marker-" + UUID.randomUUID();
    marker = dir.resolve("token");
    Files.writeString(marker, secret, StandardCharsets.UTF_8);
  }

  private static JdbcSource source(String url, String query) {
    JdbcSourceSpec spec = new JdbcSourceSpec();
    spec.setUrl(url);
    spec.setQuery(query);
    spec.setQueryTimeout("20s");
    return new JdbcSource(
        spec, JdbcTestSettings.LOOPBACK, () -> new JdbcCredentials("reader", "pw"));
  }

  private boolean leaked(RogueMySqlServer rogue) {
    return new String(rogue.received(), StandardCharsets.ISO_8859_1).contains(secret);
  }

  private static void readQuietly(JdbcSource source) {
    try {
      source.readKeys(new LineParser(KeyType.STRING, new DiscardedKeys(), 0));
    } catch (SourceException expected) {
      // The rogue answers with a file request instead of rows: the read fails either way.
    }
  }

  @Test
  void neitherDriverSendsAFileTheServerAsksFor() throws Exception {
    for (String scheme : List.of("jdbc:mysql:", "jdbc:mariadb:")) {
      try (RogueMySqlServer rogue = new RogueMySqlServer(marker.toString())) {
        readQuietly(source(scheme + "//127.0.0.1:" + rogue.port() + "/db", "select k from t"));
        assertThat(rogue.connections()).as(scheme + " logged in").isEqualTo(1);
        assertThat(rogue.fileRequests()).as(scheme + " was asked for the file").isPositive();
        assertThat(leaked(rogue)).as(scheme + " sent the file").isFalse();
      }
    }
  }

  /** MariaDB Connector/J sends the file when the query text names it, even in a comment. */
  @Test
  void aQueryNamingTheFileIsRefusedBeforeConnecting() throws Exception {
    for (String scheme : List.of("jdbc:mysql:", "jdbc:mariadb:")) {
      for (String query :
          List.of(
              "select 1 /* LOAD DATA LOCAL INFILE '" + marker + "' INTO TABLE t */",
              "select 1 -- LOAD DATA LOCAL INFILE '" + marker + "' INTO TABLE t",
              "LOAD DATA LOCAL INFILE '" + marker + "' INTO TABLE t")) {
        try (RogueMySqlServer rogue = new RogueMySqlServer(marker.toString())) {
          String url = scheme + "//127.0.0.1:" + rogue.port() + "/db";
          assertThatThrownBy(() -> readQuietly(source(url, query)))
              .as(query)
              .isInstanceOf(IllegalArgumentException.class)
              .hasMessageStartingWith("spec.source.jdbc.query");
          assertThat(rogue.connections()).isZero();
          assertThat(leaked(rogue)).isFalse();
        }
      }
    }
  }

  @Test
  void hostileUrlParametersAreRefusedBeforeConnecting() throws Exception {
    for (String url :
        List.of(
            "jdbc:mysql://127.0.0.1:%d/db?allowLoadLocalInfile=true",
            "jdbc:mysql://127.0.0.1:%d/db?allowLoadLocalInfile=true&allowUrlInLocalInfile=true",
            "jdbc:mysql://127.0.0.1:%d/db?allowLoadLocalInfileInPath=/",
            "jdbc:mariadb://127.0.0.1:%d/db?allowLocalInfile=true",
            "jdbc:mariadb://127.0.0.1:%d/db?allowLocalInfile=true&allowMultiQueries=true")) {
      try (RogueMySqlServer rogue = new RogueMySqlServer(marker.toString())) {
        String hostile = url.formatted(rogue.port());
        assertThatThrownBy(() -> readQuietly(source(hostile, "select k from t")))
            .as(hostile)
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("is not allowed");
        assertThat(rogue.connections()).isZero();
        assertThat(leaked(rogue)).isFalse();
      }
    }
  }
}
