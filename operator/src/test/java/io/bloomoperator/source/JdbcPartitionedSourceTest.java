package io.bloomoperator.source;

import static io.bloomoperator.source.JdbcPartitionsTest.partitions;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.JdbcPartitionsSpec;
import io.bloomoperator.api.JdbcSourceSpec;
import io.bloomoperator.assemble.BuildWorkers;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.testing.servers.PostgresServer;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Partitioned reads against a real PostgreSQL: the filter is byte for byte the single-connection
 * build's (String and Long keys, both layouts, rows whose partition column is NULL), partitions
 * really read on several connections, one shared snapshot keeps a concurrent UPDATE that moves rows
 * across partition bounds from losing any, and a namespace gets its share of connections only.
 */
class JdbcPartitionedSourceTest {

  static final int ROWS = 200_000;

  private static PostgresServer pg;

  @BeforeAll
  static void load() {
    pg = PostgresServer.shared();
    pg.execute(
        "drop table if exists part_rows",
        "create table part_rows (id bigint primary key, p bigint, sku text)",
        // p NULL every 1000th row (their keys must not be lost); sku NULL every 5000th.
        "insert into part_rows select g, case when g % 1000 = 0 then null else g end,"
            + " case when g % 5000 = 0 then null else 'sku-' || g end"
            + " from generate_series(1, "
            + ROWS
            + ") g");
  }

  static JdbcSource source(
      String query, JdbcPartitionsSpec partitions, JdbcSourceSettings s, String namespace) {
    JdbcSourceSpec spec = new JdbcSourceSpec();
    spec.setUrl(pg.url());
    spec.setQuery(query);
    spec.setFetchSize(1000);
    spec.setPartitions(partitions);
    return new JdbcSource(
        spec,
        s,
        () -> new JdbcCredentials(PostgresServer.USER, PostgresServer.PASSWORD),
        namespace);
  }

  static String sha256(JdbcSource source, KeyType type, FilterFormat format) throws Exception {
    return sha256(source, type, format, 2, 0);
  }

  /** The payload's sha256 and the counts of a build on {@code threads} threads. */
  static String sha256(
      JdbcSource source, KeyType type, FilterFormat format, int threads, long maxMalformed)
      throws Exception {
    FilterBuilder.Request request =
        new FilterBuilder.Request(type, 0.01, null, maxMalformed, 1L << 30, null, format);
    FilterBuilder.Result result =
        new FilterBuilder(k -> {}, BuildWorkers.of(threads, 1)).build(source, request);
    return SnapshotEncoder.sha256(result.bits())
        + " keys="
        + result.keys()
        + " nulls="
        + result.nulls()
        + " malformed="
        + result.malformed();
  }

  @Test
  void theFilterIsTheSingleConnectionBuildsByteForByte() throws Exception {
    JdbcSourceSettings settings = JdbcTestSettings.LOOPBACK;
    List<JdbcPartitionsSpec> plans =
        List.of(
            partitions("p", 1, 0, ROWS),
            partitions("p", 2, 0, ROWS),
            partitions("p", 3, 1, ROWS),
            partitions("p", 4, 0, ROWS),
            partitions("p", 7, 0, ROWS),
            // A narrow stride: nearly every row in the last, open-ended partition.
            partitions("p", 7, 50_000, 50_007),
            // Bounds outside the data: the first and last partitions hold it all.
            partitions("p", 4, -1_000_000, -999_000));
    for (KeyType type : KeyType.values()) {
      String query =
          type == KeyType.LONG ? "select id, p from part_rows" : "select sku, p from part_rows";
      for (FilterFormat format : List.of(FilterFormat.GUAVA, FilterFormat.SPLIT_BLOCK)) {
        String single = sha256(source(query, null, settings, "single"), type, format);
        assertThat(single)
            .contains(" keys=" + (type == KeyType.LONG ? ROWS : ROWS - ROWS / 5000) + " ");
        for (JdbcPartitionsSpec plan : plans) {
          assertThat(sha256(source(query, plan, settings, "partitioned"), type, format))
              .as(
                  "%s %s, %d partitions [%d, %d)",
                  type, format, plan.getCount(), plan.getLowerBound(), plan.getUpperBound())
              .isEqualTo(single);
        }
        // A build of one thread: its reading threads insert all the same (Guava: atomic ORs).
        for (int count : new int[] {1, 2, 4}) {
          assertThat(
                  sha256(
                      source(query, partitions("p", count, 0, ROWS), settings, "one-thread"),
                      type,
                      format,
                      1,
                      0))
              .as("%s %s, %d partitions, a build of one thread", type, format, count)
              .isEqualTo(single);
        }
      }
    }
  }

  /**
   * Values that are not Long keys (every 7th row) in a Long filter: counted on the reading threads
   * and summed exactly, the same payload as one connection's; past the limit the build fails.
   */
  @Test
  void malformedValuesAreCountedExactlyAcrossPartitions() throws Exception {
    String query = "select case when id % 7 = 0 then 'x' || id else id::text end, p from part_rows";
    JdbcSourceSettings settings = JdbcTestSettings.LOOPBACK;
    String single =
        sha256(
            source(query, null, settings, "single"),
            KeyType.LONG,
            FilterFormat.SPLIT_BLOCK,
            2,
            ROWS);
    assertThat(single).endsWith(" malformed=" + ROWS / 7);
    for (FilterFormat format : List.of(FilterFormat.SPLIT_BLOCK, FilterFormat.GUAVA)) {
      String one = sha256(source(query, null, settings, "single"), KeyType.LONG, format, 2, ROWS);
      for (int count : new int[] {2, 4}) {
        assertThat(
                sha256(
                    source(query, partitions("p", count, 0, ROWS), settings, "malformed"),
                    KeyType.LONG,
                    format,
                    2,
                    ROWS))
            .as("%s, %d partitions", format, count)
            .isEqualTo(one);
      }
    }
    FilterBuilder.Request limited =
        new FilterBuilder.Request(
            KeyType.LONG, 0.01, (long) ROWS, 100, 1L << 30, null, FilterFormat.SPLIT_BLOCK);
    JdbcSourceSettings counted = JdbcTestSettings.LOOPBACK.withPartitionConnections(8, 8);
    try {
      new FilterBuilder(k -> {}, BuildWorkers.of(2, 1))
          .build(source(query, partitions("p", 4, 0, ROWS), counted, "limit"), limited);
      throw new AssertionError("the limit did not fail the build");
    } catch (SourceException e) {
      assertThat(e.reason()).isEqualTo(io.bloomoperator.api.Reasons.MALFORMED_KEYS);
      assertThat(e.getMessage()).startsWith("101 value(s) are not Long keys");
    }
    assertThat(counted.partitionConnections().inUse()).as("all given back").isZero();
  }

  /**
   * The reading threads insert their own rows' keys (what sees every key the filter gets runs on
   * them), in both layouts; the build's thread only replays their first batches.
   */
  @Test
  void theReadingThreadsInsertTheirOwnKeys() throws Exception {
    for (FilterFormat format : List.of(FilterFormat.SPLIT_BLOCK, FilterFormat.GUAVA)) {
      java.util.Map<String, Long> perThread = new java.util.concurrent.ConcurrentHashMap<>();
      FilterBuilder.Beside recording =
          InsertingThreads.counting(
              name ->
                  perThread.merge(
                      name.startsWith("jdbc-partition-") ? "reading" : name, 1L, Long::sum));
      FilterBuilder.Result result =
          new FilterBuilder(k -> {}, BuildWorkers.of(2, 1))
              .with(recording)
              .build(
                  source(
                      "select sku, p from part_rows",
                      partitions("p", 4, 0, ROWS),
                      JdbcTestSettings.LOOPBACK,
                      "inserters"),
                  new FilterBuilder.Request(
                      KeyType.STRING, 0.01, (long) ROWS, 0, 1L << 30, null, format));
      assertThat(perThread.values().stream().mapToLong(Long::longValue).sum())
          .isEqualTo(result.keys());
      assertThat(perThread.getOrDefault("reading", 0L))
          .as(
              "%s: keys inserted on the reading threads, of %d (%s)",
              format, result.keys(), perThread)
          .isGreaterThan(result.keys() * 3 / 4);
    }
  }

  @Test
  void partitionsReadOnSeveralConnectionsAtOnce() throws Exception {
    AtomicInteger most = new AtomicInteger();
    AtomicInteger seen = new AtomicInteger();
    LineParser parser =
        new LineParser(
            KeyType.LONG,
            new LineParser.KeyConsumer() {
              @Override
              public void putString(String key) {}

              @Override
              public void putLong(long key) {
                if (seen.incrementAndGet() % 10_000 == 0) {
                  long alive =
                      Thread.getAllStackTraces().keySet().stream()
                          .filter(t -> t.getName().startsWith("jdbc-partition-"))
                          .count();
                  most.accumulateAndGet((int) alive, Math::max);
                }
              }
            },
            0);
    source(
            "select id, p from part_rows",
            partitions("p", 4, 0, ROWS),
            JdbcTestSettings.LOOPBACK,
            "threads")
        .readKeys(parser);
    assertThat(parser.keys()).isEqualTo(ROWS);
    assertThat(most.get()).as("reading threads alive at once").isBetween(2, 4);
  }

  /**
   * Two connections, eight partitions: they start on partitions 0 and 1 and take the others as they
   * finish. Once partition 0's rows flow (its statement started), a committed UPDATE moves every
   * row of partitions 4 to 7 into partition 0's range (negative values). Those partitions start
   * after the update: in a snapshot of their own they would no longer hold the rows, and partition
   * 0, started before, does not see them either (lost). In the shared snapshot every row is read
   * once, where it was when the read began.
   */
  @Test
  void aConcurrentUpdateMovingRowsAcrossPartitionBoundsLosesNone() throws Exception {
    pg.execute(
        "drop table if exists moving",
        "create table moving (id bigint primary key, p bigint not null, k bigint not null)",
        "insert into moving select g, g, g from generate_series(0, " + (ROWS - 1) + ") g");
    JdbcSourceSettings oneExtra = JdbcTestSettings.LOOPBACK.withPartitionConnections(1, 1);
    BitSet seen = new BitSet(ROWS);
    AtomicInteger twice = new AtomicInteger();
    AtomicBoolean updated = new AtomicBoolean();
    LineParser parser =
        new LineParser(
            KeyType.LONG,
            new LineParser.KeyConsumer() {
              @Override
              public void putString(String key) {}

              @Override
              public void putLong(long key) {
                if (!updated.get() && key < ROWS / 8) {
                  try (Connection c = pg.connect();
                      Statement s = c.createStatement()) {
                    int moved = s.executeUpdate("update moving set p = -p where p >= " + ROWS / 2);
                    assertThat(moved).isEqualTo(ROWS / 2);
                  } catch (java.sql.SQLException e) {
                    throw new IllegalStateException(e);
                  }
                  updated.set(true);
                }
                if (seen.get((int) key)) {
                  twice.incrementAndGet();
                }
                seen.set((int) key);
              }
            },
            0);
    source("select k, p from moving", partitions("p", 8, 0, ROWS), oneExtra, "moving")
        .readKeys(parser);

    assertThat(updated).isTrue();
    assertThat(seen.cardinality()).as("keys read").isEqualTo(ROWS);
    assertThat(twice.get()).as("keys read twice").isZero();
    assertThat(parser.keys()).isEqualTo(ROWS);
    // The update did commit: a new read sees the rows in partition 0's range.
    try (Connection c = pg.connect();
        Statement s = c.createStatement();
        var rs = s.executeQuery("select count(*) from moving where p < 0")) {
      rs.next();
      assertThat(rs.getLong(1)).isEqualTo(ROWS / 2);
    }
  }

  /**
   * Every row carries the snapshot it was read in ({@code pg_current_snapshot()}), while other
   * sessions commit writes throughout the read (each advances a new snapshot): one snapshot for all
   * partitions, and it is the one taken when the read began.
   */
  @Test
  void everyPartitionReadsInTheSnapshotTheReadBeganIn() throws Exception {
    pg.execute("drop table if exists ticks", "create table ticks (n int)");
    JdbcSourceSettings oneExtra = JdbcTestSettings.LOOPBACK.withPartitionConnections(1, 1);
    java.util.Set<String> snapshots = new java.util.HashSet<>();
    AtomicInteger keys = new AtomicInteger();
    try (Connection writer = pg.connect();
        Statement tick = writer.createStatement()) {
      LineParser parser =
          new LineParser(
              KeyType.STRING,
              new LineParser.KeyConsumer() {
                @Override
                public void putString(String key) {
                  snapshots.add(key.substring(0, key.indexOf('/')));
                  if (keys.getAndIncrement() % 5_000 == 0) {
                    try {
                      tick.execute("insert into ticks values (1)");
                    } catch (java.sql.SQLException e) {
                      throw new IllegalStateException(e);
                    }
                  }
                }

                @Override
                public void putLong(long key) {}
              },
              0);
      source(
              "select pg_current_snapshot()::text || '/' || id, p from part_rows",
              partitions("p", 8, 0, ROWS),
              oneExtra,
              "snapshots")
          .readKeys(parser);
    }
    assertThat(keys.get()).isEqualTo(ROWS);
    assertThat(snapshots).as("snapshots the rows were read in").hasSize(1);
    try (Connection c = pg.connect();
        Statement s = c.createStatement();
        var rs = s.executeQuery("select pg_current_snapshot()::text")) {
      rs.next();
      assertThat(rs.getString(1)).as("a snapshot now").isNotIn(snapshots);
    }
  }

  /**
   * Three namespaces ask for 64 partitions each at once, with 2 extra connections across the
   * operator and 1 per namespace: none holds more than its share, the total is never passed, and
   * every read completes with every key (a namespace that gets no extra connection reads on its
   * own).
   */
  @Test
  void aNamespaceOverItsShareGetsFewerConnectionsAndStarvesNoOther() throws Exception {
    JdbcSourceSettings settings = JdbcTestSettings.LOOPBACK.withPartitionConnections(2, 1);
    JdbcConnectionShares shares = settings.partitionConnections();
    AtomicInteger mostInUse = new AtomicInteger();
    AtomicInteger mostPerNamespace = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(3);
    try {
      List<Future<Long>> reads = new ArrayList<>();
      for (String ns : List.of("a", "b", "c")) {
        reads.add(
            pool.submit(
                () -> {
                  LineParser parser =
                      new LineParser(
                          KeyType.LONG,
                          new LineParser.KeyConsumer() {
                            long n;

                            @Override
                            public void putString(String key) {}

                            @Override
                            public void putLong(long key) {
                              if (++n % 5_000 == 0) {
                                mostInUse.accumulateAndGet(shares.inUse(), Math::max);
                                mostPerNamespace.accumulateAndGet(shares.heldBy(ns), Math::max);
                              }
                            }
                          },
                          0);
                  source("select id, p from part_rows", partitions("p", 64, 0, ROWS), settings, ns)
                      .readKeys(parser);
                  return parser.keys();
                }));
      }
      for (Future<Long> read : reads) {
        assertThat(read.get()).isEqualTo(ROWS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(mostInUse.get()).isBetween(1, 2);
    assertThat(mostPerNamespace.get()).isEqualTo(1);
    assertThat(shares.inUse()).as("all given back").isZero();
  }
}
