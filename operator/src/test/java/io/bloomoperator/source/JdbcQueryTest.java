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

  /**
   * Functions that reach files, programs, other sessions or other servers, as whole names: quoted,
   * schema-qualified, any case, with or without space before the parenthesis, inside literals too.
   * {@code LOAD_FILE(} passed the word check before (an underscore defeats {@code \\b}).
   */
  @Test
  void refusesFileProgramSessionAndDynamicSqlFunctions() {
    for (String query :
        List.of(
            "select LOAD_FILE('/etc/passwd')",
            "select load_file ('/etc/passwd')",
            "select `load_file`('/etc/passwd')",
            "select pg_read_file('/etc/passwd')",
            "select pg_catalog.pg_read_file('/etc/passwd')",
            "select \"pg_read_file\"('/etc/passwd')",
            "select PG_READ_BINARY_FILE('/etc/passwd')::text",
            "select * from pg_ls_dir('/')",
            "select pg_ls_waldir()",
            "select pg_stat_file('/etc/passwd')",
            "select lo_import('/etc/passwd')",
            "select lo_export(1, '/tmp/x')",
            "select lo_get(1)",
            "select pg_terminate_backend(pid) from pg_stat_activity",
            "select pg_cancel_backend(1)",
            "select pg_reload_conf()",
            "select dblink('host=10.0.0.1', 'select 1')",
            "select dblink_exec('host=10.0.0.1', 'drop table t')",
            "select pg_notify('c', 'x')",
            "select set_config('x.y', 'z', false)",
            "select pg_advisory_lock(1)",
            "select get_lock('x', 100)",
            "select query_to_xml('select pg_' || 'read_file(''/etc/passwd'')', true, true, '')",
            "select pg_create_logical_replication_slot('s', 'p')",
            "select sys_exec('id')",
            "with x as (select 1) select 'pg_read_file' from x",
            "select U&\"\\0070g_read_file\"('/etc/passwd')",
            "select u&'\\0041'")) {
      for (JdbcDriver driver : JdbcDriver.values()) {
        assertThatThrownBy(() -> JdbcQuery.check(query, driver))
            .as(driver + ": " + query)
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageStartingWith("spec.source.jdbc.query must not");
      }
    }
    assertThatThrownBy(() -> JdbcQuery.check("select LOAD_FILE('/x')", JdbcDriver.MARIADB))
        .hasMessageContaining("must not call load_file");
  }

  /** Names that only contain a refused one, and ordinary functions, pass. */
  @Test
  void keepsNamesThatOnlyContainARefusedFunction() {
    for (String query :
        List.of(
            "select my_load_file_name from t",
            "select pg_read_file_audit from t",
            "select k from lo_imports",
            "select upper(k), pg_sleep(0)::text from t",
            "select xdblink from t",
            "select k from t where note = 'plan&\"'")) {
      assertThat(JdbcQuery.check(query, JdbcDriver.POSTGRESQL)).as(query).isEqualTo(query);
    }
  }
}
