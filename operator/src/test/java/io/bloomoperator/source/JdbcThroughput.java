package io.bloomoperator.source;

import io.bloomoperator.api.JdbcSourceSpec;
import io.bloomoperator.assemble.BuildWorkers;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.testing.servers.MariaDbServer;
import io.bloomoperator.testing.servers.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What the JDBC source costs per row beyond the driver (docs/benchmarks.md), from a real PostgreSQL
 * table (second argument {@code postgresql}, the default, {@code mariadb} or both, comma-separated)
 * of {@code n} bigint and {@code n} text ids, each read in rounds through:
 *
 * <ol>
 *   <li>a bare JDBC loop: the driver with its defaults, the same query and fetch size, only {@code
 *       getLong}/{@code getString} per row (the driver's bound);
 *   <li>for PostgreSQL, the same loop over the statement the source really sends ({@link
 *       JdbcDriver#checked}: for a text column the value length checked by the server and a flag
 *       column per row);
 *   <li>{@link JdbcSource} into a sink that only counts (guarded sockets, per-fetch byte limit,
 *       timeouts, column reader);
 *   <li>{@link JdbcSource} into {@link FilterBuilder} as the operator builds (2 build threads),
 *       Guava layout and split-block; and the Guava layout on 1 build thread (plain rather than
 *       atomic bit updates).
 * </ol>
 *
 * Best of the rounds per variant, in ns per row; the differences are the overheads.
 *
 * <pre>
 * mvn -q -pl operator test-compile exec:exec -Dexec.executable=java -Dexec.classpathScope=test \
 *   "-Dexec.args=-Xmx256m -cp %classpath io.bloomoperator.source.JdbcThroughput 10000000 [postgresql,mariadb]"
 * </pre>
 */
public final class JdbcThroughput {

  private static final int ROUNDS = 3;

  /** Keeps the bare loops' reads from being optimized away. */
  static volatile long consumed;

  private JdbcThroughput() {}

  /** One database: how to connect bare, and the source spec for the same table. */
  private record Database(String name, String url, String user, String password) {}

  /** One way of reading a table; returns the rows it saw. */
  @FunctionalInterface
  private interface Variant {
    long read(Database db, String table, KeyType type) throws Exception;
  }

  public static void main(String[] args) throws Exception {
    long n = args.length > 0 ? Long.parseLong(args[0]) : 10_000_000L;
    List<String> names = List.of((args.length > 1 ? args[1] : "postgresql").split(","));
    List<Database> databases = new ArrayList<>();
    if (names.contains("postgresql")) {
      databases.add(postgres(n));
    }
    if (names.contains("mariadb")) {
      databases.add(mariadb(n));
    }
    System.out.printf(
        Locale.ROOT,
        "%d rows per table, fetchSize %d, %d cores, load average %s%n",
        n,
        JdbcSource.DEFAULT_FETCH_SIZE,
        Runtime.getRuntime().availableProcessors(),
        loadAverage());
    for (Database db : databases) {
      for (String[] run : new String[][] {{"bench_long", "LONG"}, {"bench_text", "STRING"}}) {
        measure(db, run[0], KeyType.valueOf(run[1]), n);
      }
    }
    System.out.printf(Locale.ROOT, "load average at the end %s%n", loadAverage());
    System.exit(0);
  }

  private static void measure(Database db, String table, KeyType type, long n) throws Exception {
    Map<String, Variant> variants = new LinkedHashMap<>();
    variants.put("bare JDBC loop, the query as written", (d, t, k) -> bare(d, t, k, false));
    if (db.name().equals("postgresql")) {
      variants.put(
          "bare JDBC loop, the statement the source sends", (d, t, k) -> bare(d, t, k, true));
    }
    variants.put("JdbcSource -> counting sink", JdbcThroughput::sourceOnly);
    variants.put(
        "JdbcSource -> FilterBuilder, Guava layout",
        (d, t, k) -> build(d, t, k, n, FilterFormat.GUAVA, 2));
    variants.put(
        "JdbcSource -> FilterBuilder, split-block",
        (d, t, k) -> build(d, t, k, n, FilterFormat.SPLIT_BLOCK, 2));
    variants.put(
        "JdbcSource -> FilterBuilder, Guava layout, 1 thread",
        (d, t, k) -> build(d, t, k, n, FilterFormat.GUAVA, 1));
    Map<String, Double> best = new LinkedHashMap<>();
    for (int round = 1; round <= ROUNDS; round++) {
      for (Map.Entry<String, Variant> v : variants.entrySet()) {
        long start = System.nanoTime();
        long rows = v.getValue().read(db, table, type);
        double nsPerRow = (System.nanoTime() - start) / (double) rows;
        if (rows != n) {
          throw new IllegalStateException(v.getKey() + " read " + rows + " rows, not " + n);
        }
        best.merge(v.getKey(), nsPerRow, Math::min);
        System.out.printf(
            Locale.ROOT,
            "  round %d %-10s %-6s %-48s %6.1f ns/row%n",
            round,
            db.name(),
            type.crdName(),
            v.getKey(),
            nsPerRow);
      }
    }
    double bare = best.values().iterator().next();
    for (Map.Entry<String, Double> e : best.entrySet()) {
      System.out.printf(
          Locale.ROOT,
          "%-10s %-6s %-48s %6.1f ns/row = %5.2f M rows/s, +%5.1f ns/row over the bare loop%n",
          db.name(),
          type.crdName(),
          e.getKey(),
          e.getValue(),
          1e3 / e.getValue(),
          e.getValue() - bare);
    }
  }

  /** The driver alone: defaults, streaming as the source streams, one getter per row. */
  private static long bare(Database db, String table, KeyType type, boolean asSent)
      throws Exception {
    String query = "select k from " + table;
    JdbcDriver driver = JdbcDriver.forUrl(db.url());
    try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password())) {
      boolean flagged = false;
      if (asSent) {
        JdbcDriver.Checked checked =
            driver.checked(c, query, JdbcSourceSettings.defaults().maxValueBytes());
        query = checked.sql();
        flagged = checked.flagged();
      }
      c.setAutoCommit(false); // PgJDBC streams through a cursor only in a transaction
      try (Statement s =
          c.createStatement(ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY)) {
        s.setFetchSize(driver.fetchSize(JdbcSource.DEFAULT_FETCH_SIZE));
        long rows = 0;
        long acc = 0;
        try (ResultSet rs = s.executeQuery(query)) {
          boolean isLong = type == KeyType.LONG;
          while (rs.next()) {
            if (isLong) {
              acc += rs.getLong(1);
            } else {
              acc += rs.getString(1).length();
            }
            if (flagged && rs.getBoolean(2)) {
              acc++;
            }
            rows++;
          }
        }
        c.commit();
        consumed = acc;
        return rows;
      }
    }
  }

  private static JdbcSource source(Database db, String table) {
    JdbcSourceSpec spec = new JdbcSourceSpec();
    spec.setUrl(db.url());
    spec.setQuery("select k from " + table);
    return new JdbcSource(
        spec, JdbcTestSettings.LOOPBACK, () -> new JdbcCredentials(db.user(), db.password()));
  }

  private static long sourceOnly(Database db, String table, KeyType type) throws Exception {
    return countKeys(source(db, table));
  }

  /** Reads {@code source} into a sink that only counts (and sums, so nothing is optimized away). */
  static long countKeys(KeySource source) throws Exception {
    long[] seen = new long[2];
    source.readKeys(
        new KeySink() {
          @Override
          public void line(String rawLine) {
            throw new IllegalStateException("a jdbc source sends values");
          }

          @Override
          public void value(String key) {
            seen[0]++;
            seen[1] += key.length();
          }

          @Override
          public void value(long key) {
            seen[0]++;
            seen[1] += key;
          }

          @Override
          public void nullValue() {
            seen[0]++;
          }
        });
    consumed = seen[1];
    return seen[0];
  }

  private static long build(
      Database db, String table, KeyType type, long n, FilterFormat format, int threads)
      throws Exception {
    FilterBuilder.Result result =
        new FilterBuilder(keys -> {}, BuildWorkers.of(threads, 1))
            .build(
                source(db, table),
                new FilterBuilder.Request(type, 0.01, n, 0, Long.MAX_VALUE, null, format));
    return result.keys();
  }

  private static Database postgres(long n) {
    PostgresServer pg = PostgresServer.shared();
    long load = System.nanoTime();
    pg.execute(
        "create table bench_long (k bigint)",
        "insert into bench_long select g from generate_series(1, " + n + ") g",
        "create table bench_text (k text)",
        "insert into bench_text select 'sku-' || g from generate_series(1, " + n + ") g",
        "vacuum analyze bench_long",
        "vacuum analyze bench_text");
    System.out.printf(
        Locale.ROOT,
        "postgresql: loaded 2 x %,d rows in %.1f s%n",
        n,
        (System.nanoTime() - load) / 1e9);
    return new Database("postgresql", pg.url(), PostgresServer.USER, PostgresServer.PASSWORD);
  }

  /**
   * MEMORY tables: the test server's 64 MB buffer pool would make an InnoDB scan of 10M rows a read
   * of the page cache; the driver's and the source's costs per row do not depend on the engine.
   */
  private static Database mariadb(long n) {
    MariaDbServer db = MariaDbServer.shared();
    long load = System.nanoTime();
    db.execute(
        "set max_heap_table_size = 4294967296",
        "create table bench_long (k bigint) engine=memory",
        "insert into bench_long select seq from seq_1_to_" + n,
        "create table bench_text (k varchar(32)) engine=memory",
        "insert into bench_text select concat('sku-', seq) from seq_1_to_" + n);
    System.out.printf(
        Locale.ROOT,
        "mariadb: loaded 2 x %,d rows in %.1f s%n",
        n,
        (System.nanoTime() - load) / 1e9);
    return new Database(
        "mariadb", db.url("jdbc:mariadb:"), MariaDbServer.USER, MariaDbServer.PASSWORD);
  }

  private static String loadAverage() {
    try {
      return java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).strip();
    } catch (java.io.IOException e) {
      return "?";
    }
  }
}
