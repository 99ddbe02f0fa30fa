package io.bloomoperator.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class JdbcQueryTest {

  @Test
  void acceptsOneSelectOrWithAndDropsATrailingSemicolon() {
    assertThat(JdbcQuery.check("  select k from t ;\n", JdbcDriver.MARIADB))
        .isEqualTo("select k from t");
    assertThat(
            JdbcQuery.check("WITH x AS (SELECT k FROM t) SELECT k FROM x", JdbcDriver.POSTGRESQL))
        .startsWith("WITH");
    assertThat(
            JdbcQuery.check(
                "select payload, reloaded, copyright from t where a#b = 1", JdbcDriver.POSTGRESQL))
        .as("words containing the refused ones, # in PostgreSQL")
        .isNotEmpty();
  }

  @Test
  void refusesWhatCouldMoveFilesWriteOrHideText() {
    String marker = "/var/run/secrets/kubernetes.io/serviceaccount/token";
    for (String query :
        List.of(
            "LOAD DATA LOCAL INFILE '" + marker + "' INTO TABLE t",
            "load xml local infile '" + marker + "' into table t",
            "select 1 /* LOAD DATA LOCAL INFILE '" + marker + "' */",
            "select 1 -- LOAD DATA LOCAL INFILE '" + marker + "'",
            "select 1 # LOAD DATA LOCAL INFILE '" + marker + "'",
            "select 1 /*!50000 , sleep(1) */",
            "select 'LOAD DATA LOCAL INFILE ''" + marker + "'''",
            "select k from t into outfile '/tmp/x'",
            "select k from t into dumpfile '/tmp/x'",
            "select k into new_table from t",
            "select 1; load data local infile '" + marker + "' into table t",
            "select 1; delete from t",
            "select 1;;",
            "COPY t FROM '/etc/passwd'",
            "copy (select 1) to program 'id'",
            "delete from t",
            "insert into t values (1)",
            "update t set k = 1",
            "call p()",
            "do sleep(1)",
            "show tables",
            "(select 1)",
            "/* x */ select 1",
            "select 1\u0000",
            "")) {
      assertThatThrownBy(() -> JdbcQuery.check(query, JdbcDriver.MARIADB))
          .as(query)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("spec.source.jdbc.query");
    }
    assertThatThrownBy(() -> JdbcQuery.check("select 1 /* load */", JdbcDriver.POSTGRESQL))
        .hasMessageContaining("comments");
    assertThatThrownBy(() -> JdbcQuery.check("select k from t into outfile 'x'", JdbcDriver.MYSQL))
        .hasMessageContaining("INTO");
  }
}
