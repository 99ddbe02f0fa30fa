package io.bloomoperator.source;

import io.bloomoperator.api.JdbcSourceSpec;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.testing.servers.PostgresServer;
import java.util.Locale;

/**
 * Build throughput from a real PostgreSQL table through the JDBC source's streaming cursor, for
 * bigint and text keys (docs/benchmarks.md):
 *
 * <pre>
 * mvn -q -pl operator test-compile exec:exec -Dexec.executable=java -Dexec.classpathScope=test \
 *   "-Dexec.args=-Xmx256m -cp %classpath io.bloomoperator.source.JdbcThroughput 10000000"
 * </pre>
 */
public final class JdbcThroughput {

  private JdbcThroughput() {}

  public static void main(String[] args) throws Exception {
    long n = args.length > 0 ? Long.parseLong(args[0]) : 10_000_000L;
    PostgresServer pg = PostgresServer.shared();
    long load = System.nanoTime();
    pg.execute(
        "create table bench_long (k bigint)",
        "insert into bench_long select g from generate_series(1, " + n + ") g",
        "create table bench_text (k text)",
        "insert into bench_text select 'sku-' || g from generate_series(1, " + n + ") g",
        "analyze bench_long",
        "analyze bench_text");
    System.out.printf(
        Locale.ROOT, "loaded 2 x %,d rows in %.1f s%n", n, (System.nanoTime() - load) / 1e9);
    for (String[] run : new String[][] {{"bench_long", "LONG"}, {"bench_text", "STRING"}}) {
      JdbcSourceSpec spec = new JdbcSourceSpec();
      spec.setUrl(pg.url());
      spec.setQuery("select k from " + run[0]);
      JdbcSource source =
          new JdbcSource(
              spec,
              JdbcTestSettings.LOOPBACK,
              () -> new JdbcCredentials(PostgresServer.USER, PostgresServer.PASSWORD));
      KeyType type = KeyType.valueOf(run[1]);
      FilterBuilder.Result result =
          new FilterBuilder()
              .build(source, new FilterBuilder.Request(type, 0.01, n, 0, Long.MAX_VALUE));
      System.out.printf(
          Locale.ROOT,
          "jdbc %-6s %,d keys in %.1f s = %.2f M keys/s (fetchSize %d)%n",
          type.crdName(),
          result.keys(),
          result.took().toMillis() / 1e3,
          result.keys() / (result.took().toMillis() / 1e3) / 1e6,
          JdbcSource.DEFAULT_FETCH_SIZE);
    }
    System.exit(0);
  }
}
