package io.bloomoperator.source;

import io.bloomoperator.testing.servers.PostgresServer;

/** The JDBC tests' data: two million-row tables in the shared PostgreSQL, loaded once. */
final class JdbcTestTables {

  private JdbcTestTables() {}

  /** Rows of {@link #LONG_TABLE} and {@link #TEXT_TABLE} that are not NULL. */
  public static final int MILLION = 1_000_000;

  /** {@code k bigint}: 1..{@value #MILLION} plus {@value #LONG_NULLS} NULLs. */
  public static final String LONG_TABLE = "long_keys";

  public static final int LONG_NULLS = 3;

  /** {@code k text}: {@code sku-1..sku-1000000} plus {@value #TEXT_NULLS} NULLs. */
  public static final String TEXT_TABLE = "text_keys";

  public static final int TEXT_NULLS = 2;

  private static boolean loaded;

  /** Creates {@link #LONG_TABLE} and {@link #TEXT_TABLE} once per JVM (about a second each). */
  public static synchronized void load(PostgresServer server) {
    if (loaded) {
      return;
    }
    server.execute(
        "create table " + LONG_TABLE + " (k bigint)",
        "insert into " + LONG_TABLE + " select g from generate_series(1, " + MILLION + ") g",
        "insert into " + LONG_TABLE + " select null from generate_series(1, " + LONG_NULLS + ")",
        "create table " + TEXT_TABLE + " (k text)",
        "insert into "
            + TEXT_TABLE
            + " select 'sku-' || g from generate_series(1, "
            + MILLION
            + ") g",
        "insert into " + TEXT_TABLE + " select null from generate_series(1, " + TEXT_NULLS + ")",
        "analyze " + LONG_TABLE,
        "analyze " + TEXT_TABLE);
    loaded = true;
  }
}
