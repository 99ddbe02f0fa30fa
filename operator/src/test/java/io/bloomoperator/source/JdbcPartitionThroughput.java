package io.bloomoperator.source;

import io.bloomoperator.api.JdbcPartitionsSpec;
import io.bloomoperator.api.JdbcSourceSpec;
import io.bloomoperator.assemble.BuildWorkers;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.testing.servers.PostgresServer;
import java.io.OutputStream;
import java.sql.Connection;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.postgresql.PGConnection;

/**
 * Partitioned JDBC ingest from a real PostgreSQL (docs/benchmarks.md, issue 31): keys/s of {@link
 * JdbcSource} with 1 and 2 partitions, into a counting sink and into {@link FilterBuilder}
 * (split-block, 2 build threads), beside PostgreSQL's own {@code COPY (query) TO STDOUT} of the
 * same rows into a byte counter (the floor: the server producing the rows, no JDBC row decoding).
 * Tables {@code pbench_long (k bigint, p bigint)} and {@code pbench_text (k text, p bigint)},
 * {@code p} = row number; best of {@value #ROUNDS} rounds.
 *
 * <pre>
 * java -Xmx512m -cp $CP io.bloomoperator.source.JdbcPartitionThroughput 10000000
 * </pre>
 */
public final class JdbcPartitionThroughput {

  private static final int ROUNDS = 2;

  private JdbcPartitionThroughput() {}

  @FunctionalInterface
  private interface Variant {
    long run() throws Exception;
  }

  public static void main(String[] args) throws Exception {
    long n = args.length > 0 ? Long.parseLong(args[0]) : 10_000_000L;
    PostgresServer pg = PostgresServer.shared();
    long load = System.nanoTime();
    pg.execute(
        "drop table if exists pbench_long",
        "drop table if exists pbench_text",
        "create table pbench_long (k bigint, p bigint)",
        "insert into pbench_long select g, g from generate_series(1, " + n + ") g",
        "create table pbench_text (k text, p bigint)",
        "insert into pbench_text select 'sku-' || g, g from generate_series(1, " + n + ") g",
        "vacuum analyze pbench_long",
        "vacuum analyze pbench_text");
    System.out.printf(
        Locale.ROOT,
        "loaded 2 x %,d rows in %.1f s; %d cores; load average %s%n",
        n,
        (System.nanoTime() - load) / 1e9,
        Runtime.getRuntime().availableProcessors(),
        loadAverage());
    for (String[] t : new String[][] {{"pbench_long", "LONG"}, {"pbench_text", "STRING"}}) {
      String table = t[0];
      KeyType type = KeyType.valueOf(t[1]);
      Map<String, Variant> variants = new LinkedHashMap<>();
      variants.put("COPY (select k ...) TO STDOUT, 1 session", () -> copy(pg, table, 0, n + 1));
      variants.put("COPY, 2 sessions at once (halves)", () -> copyHalves(pg, table, n));
      for (int parts : new int[] {1, 2}) {
        variants.put(
            "JdbcSource -> counting sink, " + parts + " partition(s)",
            () -> JdbcThroughput.countKeys(source(pg, table, parts, n)));
        variants.put(
            "JdbcSource -> FilterBuilder split-block, " + parts + " partition(s)",
            () ->
                new FilterBuilder(k -> {}, BuildWorkers.of(2, 1))
                    .build(
                        source(pg, table, parts, n),
                        new FilterBuilder.Request(
                            type, 0.01, n, 0, Long.MAX_VALUE, null, FilterFormat.SPLIT_BLOCK))
                    .keys());
      }
      Map<String, Double> best = new LinkedHashMap<>();
      for (int round = 1; round <= ROUNDS; round++) {
        for (Map.Entry<String, Variant> v : variants.entrySet()) {
          long start = System.nanoTime();
          long rows = v.getValue().run();
          double seconds = (System.nanoTime() - start) / 1e9;
          if (rows != n) {
            throw new IllegalStateException(v.getKey() + " read " + rows + " rows, not " + n);
          }
          best.merge(v.getKey(), rows / seconds, Math::max);
          System.out.printf(
              Locale.ROOT,
              "  round %d %-6s %-52s %6.2f M rows/s%n",
              round,
              type.crdName(),
              v.getKey(),
              rows / seconds / 1e6);
        }
      }
      for (Map.Entry<String, Double> e : best.entrySet()) {
        System.out.printf(
            Locale.ROOT,
            "%-6s %-52s %6.2f M keys/s%n",
            type.crdName(),
            e.getKey(),
            e.getValue() / 1e6);
      }
    }
    System.out.printf(Locale.ROOT, "load average at the end %s%n", loadAverage());
    System.exit(0);
  }

  private static JdbcSource source(PostgresServer pg, String table, int parts, long n) {
    JdbcSourceSpec spec = new JdbcSourceSpec();
    spec.setUrl(pg.url());
    spec.setQuery("select k, p from " + table);
    if (parts > 1) {
      JdbcPartitionsSpec p = new JdbcPartitionsSpec();
      p.setColumn("p");
      p.setCount(parts);
      p.setLowerBound(1L);
      p.setUpperBound(n + 1);
      spec.setPartitions(p);
    }
    return new JdbcSource(
        spec,
        JdbcTestSettings.LOOPBACK,
        () -> new JdbcCredentials(PostgresServer.USER, PostgresServer.PASSWORD),
        "bench");
  }

  /** Rows of {@code COPY (select k from table where p in [from, to)) TO STDOUT}: lines counted. */
  private static long copy(PostgresServer pg, String table, long from, long to) throws Exception {
    long[] lines = {0};
    OutputStream counter =
        new OutputStream() {
          @Override
          public void write(int b) {
            if (b == '\n') {
              lines[0]++;
            }
          }

          @Override
          public void write(byte[] b, int off, int len) {
            for (int i = off; i < off + len; i++) {
              if (b[i] == '\n') {
                lines[0]++;
              }
            }
          }
        };
    try (Connection c = pg.connect()) {
      c.unwrap(PGConnection.class)
          .getCopyAPI()
          .copyOut(
              "COPY (select k from "
                  + table
                  + " where p >= "
                  + from
                  + " and p < "
                  + to
                  + ") TO STDOUT",
              counter);
    }
    return lines[0];
  }

  private static long copyHalves(PostgresServer pg, String table, long n) throws Exception {
    long half = n / 2 + 1;
    java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newFixedThreadPool(2);
    try {
      var a = pool.submit(() -> copy(pg, table, 0, half));
      var b = pool.submit(() -> copy(pg, table, half, n + 1));
      return a.get() + b.get();
    } finally {
      pool.shutdownNow();
    }
  }

  private static String loadAverage() {
    try {
      return java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).strip();
    } catch (java.io.IOException e) {
      return "?";
    }
  }
}
