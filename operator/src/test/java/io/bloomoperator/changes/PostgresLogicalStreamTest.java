package io.bloomoperator.changes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.api.JdbcSourceSpec;
import io.bloomoperator.api.PostgresLogicalChangesSpec;
import io.bloomoperator.api.StreamStatus;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.source.EgressPolicy;
import io.bloomoperator.source.JdbcSourceSettings;
import io.bloomoperator.source.JdbcTestSettings;
import io.bloomoperator.source.LineParser;
import io.bloomoperator.source.PostgresConnector;
import io.bloomoperator.testing.servers.LogicalPostgres;
import io.bloomoperator.testing.servers.PostgresServer;
import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The PostgreSQL logical replication stream against a real PostgreSQL 15 of its own, started with
 * {@code wal_level = logical} (the shared test server cannot be restarted with it), read by a role
 * with REPLICATION as a user would set it up (docs/changes.md).
 */
class PostgresLogicalStreamTest {

  static final String ROLE = LogicalPostgres.ROLE;
  static final String ROLE_PASSWORD = LogicalPostgres.PASSWORD;

  private static final EgressPolicy LOOPBACK_ONLY = EgressPolicy.of("127.0.0.1/32", null);
  private static final AtomicInteger NAMES = new AtomicInteger();

  private static PostgresServer pg;

  @BeforeAll
  static void start() {
    pg = LogicalPostgres.shared();
  }

  /** A fresh table {@code name(id text primary key, note text)} and its key-only publication. */
  private static String table() {
    String name = "s" + NAMES.incrementAndGet() + "_products";
    pg.execute("CREATE TABLE " + name + " (id text PRIMARY KEY, note text)");
    pg.executeAsSuperuser("CREATE PUBLICATION pub_" + name + " FOR TABLE " + name + " (id)");
    return name;
  }

  private static PostgresLogicalChangesSpec spec(String table) {
    PostgresLogicalChangesSpec spec = new PostgresLogicalChangesSpec();
    spec.setPublication("pub_" + table);
    spec.setSlot("slot_" + table);
    spec.setKeyColumn("id");
    return spec;
  }

  static PostgresConnector connector(PostgresServer server, String user) {
    return connector(server.url(), user);
  }

  /** A connector to {@code url} (the server's, with parameters such as sslmode) as {@code user}. */
  static PostgresConnector connector(String url, String user) {
    JdbcSourceSpec source = new JdbcSourceSpec();
    source.setUrl(url);
    return PostgresConnector.forUser(
        source, JdbcSourceSettings.defaults().withEgress(LOOPBACK_ONLY), user, ROLE_PASSWORD);
  }

  private static PostgresLogicalStream stream(PostgresLogicalChangesSpec spec) {
    return stream(spec, StreamLimits.defaults(), ROLE);
  }

  private static PostgresLogicalStream stream(
      PostgresLogicalChangesSpec spec, StreamLimits limits, String user) {
    return new PostgresLogicalStream(spec, KeyType.STRING, limits, connector(pg, user), null);
  }

  /** Reads until {@code expected} adds arrived or ten seconds passed; the last batch. */
  private static ChangeStream.Batch readAll(
      ChangeStream stream, StreamPosition from, int expected, List<String> into, long[] deletes)
      throws StreamException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    ChangeStream.Batch batch = null;
    StreamPosition at = from;
    while ((batch == null || into.size() < expected) && System.nanoTime() < deadline) {
      batch = stream.read(at);
      into.addAll(batch.adds());
      deletes[0] += batch.deletes();
      at = batch.next();
    }
    return batch;
  }

  /**
   * The message of the StreamException of {@code kind} that {@code call} throws, which contains
   * each of {@code parts}.
   */
  private static String fails(
      org.assertj.core.api.ThrowableAssert.ThrowingCallable call,
      StreamException.Kind kind,
      String... parts) {
    Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(call);
    assertThat(thrown).isInstanceOf(StreamException.class);
    assertThat(((StreamException) thrown).kind()).isEqualTo(kind);
    assertThat(thrown.getMessage()).contains(parts);
    return thrown.getMessage();
  }

  /** Reads on from {@code start}, 20 reads (about 10 s when nothing comes), each from the last. */
  private static void readOn(ChangeStream stream, StreamPosition start) throws StreamException {
    StreamPosition at = start;
    for (int i = 0; i < 20; i++) {
      at = stream.read(at).next();
    }
  }

  /** Reads from {@code from} (the published position) until a read brings adds. */
  private static List<String> readSame(ChangeStream stream, StreamPosition from)
      throws StreamException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    List<String> adds = List.of();
    while (adds.isEmpty() && System.nanoTime() < deadline) {
      adds = stream.read(from).adds();
    }
    return adds;
  }

  @Test
  void readsInsertsUpdatesAndDeletesFromAPositionAndResumesThere() throws Exception {
    String table = table();
    PostgresLogicalChangesSpec spec = spec(table);
    try (PostgresLogicalStream stream = stream(spec)) {
      StreamPosition start = stream.positionAt(Instant.now());
      assertThat(LogicalPostgres.slotExists(spec.getSlot())).isTrue();
      StreamStatus status = new StreamStatus();
      stream.describe(status);
      assertThat(status.getSlot()).endsWith("/bloom/" + spec.getSlot());

      pg.execute(
          "INSERT INTO " + table + " VALUES ('a', 'x'), ('b', 'x'), ('c', 'x')",
          "UPDATE " + table + " SET id = 'b2' WHERE id = 'b'",
          "UPDATE " + table + " SET note = 'y' WHERE id = 'c'",
          "DELETE FROM " + table + " WHERE id = 'a'");
      List<String> adds = new ArrayList<>();
      long[] deletes = {0};
      ChangeStream.Batch last = readAll(stream, start, 5, adds, deletes);
      assertThat(adds).containsExactly("a", "b", "c", "b2", "c");
      assertThat(deletes[0]).isEqualTo(1);
      StreamPosition end = last.next();
      assertThat(end.of(0)).isGreaterThan(start.of(0));

      // From the end: nothing new.
      ChangeStream.Batch none = stream.read(end);
      assertThat(none.adds()).isEmpty();
      assertThat(none.next().of(0)).isGreaterThanOrEqualTo(end.of(0));

      // A read whose publish failed is read again from the published position: the same adds.
      pg.execute("INSERT INTO " + table + " VALUES ('d', 'x'), ('e', 'x')");
      assertThat(readSame(stream, end)).containsExactly("d", "e");
      assertThat(readSame(stream, end)).containsExactly("d", "e");
    }
  }

  /**
   * A full build's scan and the stream meet exactly at a slot's consistent point: the scan reads in
   * the snapshot the slot exported, the stream starts at the point. On the first build the filter's
   * slot exports; later a temporary slot does, and the filter's slot, confirmed at an older
   * position, is started at the newer point: the server skips what committed before it (in the
   * scan) and sends what committed after (not in it), each key once.
   */
  @Test
  void aFullBuildsScanAndTheStreamMeetAtTheSlotsConsistentPoint() throws Exception {
    String table = table();
    pg.execute("INSERT INTO " + table + " VALUES ('before', 'x')");
    PostgresLogicalChangesSpec spec = spec(table);
    try (PostgresLogicalStream stream = stream(spec)) {
      StreamPosition first;
      try (ScanStart start = stream.scanStart(Instant.now())) {
        assertThat(LogicalPostgres.slotExists(spec.getSlot())).isTrue();
        assertThat(scanSlots()).as("the filter's own slot exported").isZero();
        pg.execute("INSERT INTO " + table + " VALUES ('after-first', 'x')");
        assertThat(scan(table, start)).containsExactly("before");
        first = start.position().orElseThrow();
      }
      List<String> streamed = new ArrayList<>();
      StreamPosition confirmed = readAll(stream, first, 1, streamed, new long[1]).next();
      assertThat(streamed).containsExactly("after-first");
      stream.read(confirmed); // confirms it: the slot now keeps the log from there only

      pg.execute("INSERT INTO " + table + " VALUES ('between', 'x')");
      StreamPosition second;
      try (ScanStart start = stream.scanStart(Instant.now())) {
        assertThat(scanSlots()).as("a temporary slot exported").isEqualTo(1);
        // The exporting connection replaced the stream's own replication connection: the
        // filter's slot is not in use (the server ends a session closed just before a moment
        // later). Counted by slot, not by all walsenders: other tests' streams share the server.
        org.awaitility.Awaitility.await()
            .atMost(Duration.ofSeconds(5))
            .until(() -> !slotActive(spec.getSlot()));
        pg.execute("INSERT INTO " + table + " VALUES ('after-second', 'x')");
        assertThat(scan(table, start))
            .containsExactlyInAnyOrder("before", "after-first", "between");
        second = start.position().orElseThrow();
        assertThat(second.of(0)).isGreaterThan(confirmed.of(0));
        StreamPosition from = second;
        fails(() -> stream.read(from), StreamException.Kind.UNAVAILABLE, "holds the stream's");
      }
      // The temporary slot goes with its connection (the server ends the session a moment later).
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> scanSlots() == 0);
      List<String> after = new ArrayList<>();
      StreamPosition end = readAll(stream, second, 1, after, new long[1]).next();
      readOn(stream, end);
      assertThat(after).containsExactly("after-second");
    }
  }

  /**
   * A transaction running longer than a full build may wait for its snapshot fails that build's
   * position; until it ends, further builds and the probe before one fail at once (no 30 s wait, no
   * full scan for nothing, so the stream backs off rather than rebuilding in a loop); once it ends,
   * the next build's scan and stream meet again.
   */
  @Test
  void aLongTransactionFailsTheSnapshotOnceAndFullBuildsWaitForItsEnd() throws Exception {
    String table = table();
    PostgresLogicalChangesSpec spec = spec(table);
    try (PostgresLogicalStream stream =
            new PostgresLogicalStream(
                spec,
                KeyType.STRING,
                StreamLimits.defaults(),
                connector(pg, ROLE),
                null,
                Duration.ofSeconds(2));
        Connection batch = pg.connect()) {
      stream.scanStart(Instant.now()).close(); // the filter's slot exists: later builds export
      batch.setAutoCommit(false);
      try (Statement s = batch.createStatement()) {
        s.execute("INSERT INTO " + table + " VALUES ('long-running', 'x')");
      }
      long began = System.nanoTime();
      fails(() -> stream.scanStart(Instant.now()), StreamException.Kind.UNAVAILABLE, "ran longer");
      long waited = (System.nanoTime() - began) / 1_000_000;
      began = System.nanoTime();
      fails(() -> stream.scanStart(Instant.now()), StreamException.Kind.UNAVAILABLE, "still");
      fails(() -> stream.positionAt(Instant.now()), StreamException.Kind.UNAVAILABLE, "still");
      long refused = (System.nanoTime() - began) / 1_000_000;
      System.out.printf(
          "a long transaction: the first export waited %d ms, a build and a probe after it were"
              + " refused in %d ms%n",
          waited, refused);
      assertThat(waited).isBetween(1900L, 3000L);
      assertThat(refused).isLessThan(1000L);
      batch.commit();
      stream.positionAt(Instant.now());
      try (ScanStart start = stream.scanStart(Instant.now())) {
        assertThat(scan(table, start)).containsExactly("long-running");
      }
    }
  }

  /** The keys a jdbc source of {@code table} reads in {@code start}'s snapshot. */
  private static List<String> scan(String table, ScanStart start) throws Exception {
    // As the stream's role, as the operator scans: the source and the stream share a Secret.
    pg.execute("GRANT SELECT ON " + table + " TO " + ROLE);
    JdbcSourceSpec source = new JdbcSourceSpec();
    source.setUrl(pg.url());
    source.setQuery("select id from " + table);
    List<String> keys = new ArrayList<>();
    JdbcTestSettings.source(source, ROLE, ROLE_PASSWORD)
        .inSnapshot(start.snapshot().orElseThrow())
        .readKeys(
            new LineParser(
                KeyType.STRING,
                new LineParser.KeyConsumer() {
                  @Override
                  public void putString(String key) {
                    keys.add(key);
                  }

                  @Override
                  public void putLong(long key) {
                    keys.add(Long.toString(key));
                  }
                },
                0));
    return keys;
  }

  /** Temporary slots of full builds on the server now. */
  private static int scanSlots() throws Exception {
    return count(
        "SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE '"
            + PostgresLogicalStream.SCAN_SLOT_PREFIX
            + "%'");
  }

  /** Whether a replication connection is streaming from {@code slot} now. */
  private static boolean slotActive(String slot) throws Exception {
    return count(
            "SELECT count(*) FROM pg_replication_slots WHERE active AND slot_name = '" + slot + "'")
        > 0;
  }

  /** {@code sql}'s count, as the streams' role: pg_stat_activity hides other roles' sessions. */
  private static int count(String sql) throws Exception {
    try (Connection c = pg.connect(ROLE, ROLE_PASSWORD);
        Statement s = c.createStatement();
        ResultSet r = s.executeQuery(sql)) {
      r.next();
      return r.getInt(1);
    }
  }

  /**
   * A database that stops answering (every server process stopped: the kernel still accepts
   * connections, nothing answers them or the open session) holds a read, and a position query, no
   * longer than one deadline over the whole call, connecting and checks included; the failure says
   * so in the operator's words only. Before the deadline, connecting alone could take 5 s.
   */
  @Test
  void aSilentDatabaseHoldsAReadNoLongerThanItsDeadline() throws Exception {
    String table = table();
    PostgresLogicalChangesSpec spec = spec(table);
    StreamLimits limits = StreamLimits.defaults();
    long bound = limits.maxCallTime().toMillis();
    String recorded;
    StreamPosition start;
    try (PostgresLogicalStream stream = stream(spec)) {
      start = stream.positionAt(Instant.now());
      stream.read(start);
      StreamStatus status = new StreamStatus();
      stream.describe(status);
      recorded = status.getSlot();
    }
    List<Long> took = new ArrayList<>();
    List<Throwable> failures = new ArrayList<>();
    try (PostgresLogicalStream open =
            new PostgresLogicalStream(spec, KeyType.STRING, limits, connector(pg, ROLE), recorded);
        PostgresLogicalStream fresh =
            new PostgresLogicalStream(spec, KeyType.STRING, limits, connector(pg, ROLE), recorded);
        PostgresLogicalStream probed =
            new PostgresLogicalStream(
                spec, KeyType.STRING, limits, connector(pg, ROLE), recorded)) {
      assertThat(open.read(start).adds()).isEmpty(); // its session is open when the server stops
      pg.pause();
      try {
        List<org.assertj.core.api.ThrowableAssert.ThrowingCallable> calls =
            List.of(
                // From another position: the open session is closed and a new one connects.
                () -> open.read(start.with(0, start.of(0) + 1)),
                () -> fresh.read(start),
                () -> probed.positionAt(Instant.now()));
        for (var call : calls) {
          long began = System.nanoTime();
          failures.add(org.assertj.core.api.Assertions.catchThrowable(call));
          took.add((System.nanoTime() - began) / 1_000_000);
        }
      } finally {
        pg.resume();
      }
      System.out.printf(
          "a silent database: a read that reconnects, a read of a new stream, a position query"
              + " failed after %s ms (bound %d ms)%n",
          took, bound);
      assertThat(took).allMatch(ms -> ms <= bound + 300, "within the bound and 300 ms");
      for (Throwable thrown : failures) {
        assertThat(thrown).isInstanceOf(StreamException.class);
        assertThat(((StreamException) thrown).kind()).isEqualTo(StreamException.Kind.UNAVAILABLE);
        assertThat(thrown.getMessage())
            .contains("did not answer within " + bound)
            .doesNotContain("FATAL", "ERROR", "PSQLException", "Connection");
      }
      // Answering again: reads work (once the server has ended the sessions closed meanwhile).
      org.awaitility.Awaitility.await()
          .atMost(Duration.ofSeconds(20))
          .ignoreExceptions()
          .until(() -> fresh.read(start).next().of(0) >= start.of(0));
    }
  }

  @Test
  void thePositionAdvancesOnlyAtACommit() throws Exception {
    String table = table();
    PostgresLogicalChangesSpec spec = spec(table);
    try (PostgresLogicalStream stream = stream(spec);
        Connection writer = pg.connect()) {
      StreamPosition start = stream.positionAt(Instant.now());
      writer.setAutoCommit(false);
      try (Statement s = writer.createStatement()) {
        s.execute("INSERT INTO " + table + " VALUES ('open-1', 'x')");
      }
      // Written but not committed: nothing to add, and the position read leaves it ahead.
      ChangeStream.Batch during = stream.read(start);
      assertThat(during.adds()).isEmpty();
      writer.commit();
      List<String> adds = new ArrayList<>();
      StreamPosition before = readAll(stream, during.next(), 1, adds, new long[1]).next();
      assertThat(adds).containsExactly("open-1");

      // Two transactions, the second larger than the read's share: the read stops at the first
      // one's commit, never inside the second, and the next read has the second whole.
      pg.execute("INSERT INTO " + table + " VALUES ('small', 'x')");
      pg.execute("INSERT INTO " + table + " SELECT 'big-' || g, 'x' FROM generate_series(1, 50) g");
      long share = 10 * StreamLimits.keyBytes("big-10".length());
      List<String> first = new ArrayList<>();
      StreamPosition at = before;
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (first.isEmpty() && System.nanoTime() < deadline) {
        ChangeStream.Batch batch = stream.read(at, share);
        first.addAll(batch.adds());
        at = batch.next();
      }
      assertThat(first).contains("small").noneMatch(k -> k.startsWith("big-"));
      List<String> second = new ArrayList<>();
      readAll(stream, at, 50, second, new long[1]);
      assertThat(second)
          .containsExactlyElementsOf(
              IntStream.rangeClosed(1, 50).mapToObj(i -> "big-" + i).toList());
    }
  }

  @Test
  void aTruncateOfTheTableIsALostPosition() throws Exception {
    String table = table();
    try (PostgresLogicalStream stream = stream(spec(table))) {
      StreamPosition start = stream.positionAt(Instant.now());
      pg.execute("INSERT INTO " + table + " VALUES ('t1', 'x')", "TRUNCATE " + table);
      assertThat(
              fails(() -> readOn(stream, start), StreamException.Kind.POSITION_LOST, "truncated"))
          .doesNotContain("t1");
    }
  }

  @Test
  void aPublicationOfMoreThanTheKeyColumnIsRefused() throws Exception {
    String table = table();
    pg.executeAsSuperuser(
        "CREATE PUBLICATION wide_" + table + " FOR TABLE " + table + " (id, note)");
    PostgresLogicalChangesSpec spec = spec(table);
    spec.setPublication("wide_" + table);
    try (PostgresLogicalStream stream = stream(spec)) {
      fails(
          () -> stream.positionAt(Instant.now()),
          StreamException.Kind.REFUSED,
          "2 column(s)",
          "keyColumn");
    }
    assertThat(LogicalPostgres.slotExists(spec.getSlot())).isFalse();
  }

  @Test
  void aRoleWithoutReplicationIsRefusedWithAClearMessage() throws Exception {
    String table = table();
    PostgresLogicalChangesSpec spec = spec(table);
    try (PostgresLogicalStream stream =
        stream(spec, StreamLimits.defaults(), LogicalPostgres.ROLE_WITHOUT_REPLICATION)) {
      fails(
          () -> stream.positionAt(Instant.now()),
          StreamException.Kind.REFUSED,
          "no REPLICATION attribute");
    }
  }

  @Test
  void aSlotThatIsNotOursIsRefusedAndNotDropped() throws Exception {
    String table = table();
    PostgresLogicalChangesSpec spec = spec(table);
    spec.setSlot("other_app_" + table);
    pg.executeAsSuperuser(
        "SELECT pg_create_logical_replication_slot('" + spec.getSlot() + "', 'pgoutput')");
    try (PostgresLogicalStream stream = stream(spec)) {
      fails(
          () -> stream.positionAt(Instant.now()),
          StreamException.Kind.REFUSED,
          "not",
          "created by the operator");
      StreamPosition any = new StreamPosition(new java.util.TreeMap<>(java.util.Map.of(0, 1L)));
      fails(() -> stream.read(any), StreamException.Kind.REFUSED, "created by the operator");
      assertThat(stream.dropSlot()).isTrue();
    }
    assertThat(LogicalPostgres.slotExists(spec.getSlot())).isTrue();
    pg.executeAsSuperuser("SELECT pg_drop_replication_slot('" + spec.getSlot() + "')");
  }

  @Test
  void theSlotIsDroppedByItsOwnerOnly() throws Exception {
    String table = table();
    PostgresLogicalChangesSpec spec = spec(table);
    String recorded;
    try (PostgresLogicalStream stream = stream(spec)) {
      stream.positionAt(Instant.now());
      StreamStatus status = new StreamStatus();
      stream.describe(status);
      recorded = status.getSlot();
    }
    // A new operator process knows the slot from the status only.
    try (PostgresLogicalStream again =
        new PostgresLogicalStream(
            spec, KeyType.STRING, StreamLimits.defaults(), connector(pg, ROLE), recorded)) {
      StreamPosition at = again.positionAt(Instant.now());
      assertThat(again.read(at).adds()).isEmpty();
      assertThat(again.dropSlot()).isTrue();
    }
    assertThat(LogicalPostgres.slotExists(spec.getSlot())).isFalse();
  }

  /**
   * An operator killed after creating the slot and before the status recorded it: after the restart
   * the status records nothing, and the slot was refused as another application's (the stream
   * stayed down until someone dropped it by hand). The record on the pod's disk, written before the
   * creation, makes it the filter's again; for another filter it is still refused, and dropping the
   * slot clears the record.
   */
  @Test
  void aSlotCreatedButNotYetRecordedInTheStatusIsKnownAfterARestartFromThePodsDisk(
      @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
    String table = table();
    PostgresLogicalChangesSpec spec = spec(table);
    SlotIntent record = SlotIntent.of(dir, "3f1c0a2e-uid-of-the-filter");
    try (PostgresLogicalStream first =
        new PostgresLogicalStream(
            spec, KeyType.STRING, StreamLimits.defaults(), connector(pg, ROLE), null, record)) {
      first.positionAt(Instant.now()); // creates the slot; then the process is "killed"
    }
    assertThat(LogicalPostgres.slotExists(spec.getSlot())).isTrue();
    assertThat(record.read())
        .hasValueSatisfying(id -> assertThat(id).endsWith("/" + spec.getSlot()));

    try (PostgresLogicalStream stranger =
        new PostgresLogicalStream(
            spec,
            KeyType.STRING,
            StreamLimits.defaults(),
            connector(pg, ROLE),
            null,
            SlotIntent.of(dir, "another-filter"))) {
      fails(
          () -> stranger.positionAt(Instant.now()),
          StreamException.Kind.REFUSED,
          "created by the operator");
    }
    try (PostgresLogicalStream restarted =
        new PostgresLogicalStream(
            spec, KeyType.STRING, StreamLimits.defaults(), connector(pg, ROLE), null, record)) {
      StreamPosition at = restarted.positionAt(Instant.now());
      assertThat(restarted.read(at).adds()).isEmpty();
      StreamStatus status = new StreamStatus();
      restarted.describe(status);
      assertThat(status.getSlot()).as("recorded in the status now").endsWith("/" + spec.getSlot());
      assertThat(restarted.dropSlot()).isTrue();
    }
    assertThat(LogicalPostgres.slotExists(spec.getSlot())).isFalse();
    assertThat(record.read()).as("cleared with the slot").isEmpty();
  }

  @Test
  void aSlotRetainingMoreThanTheBoundIsDropped() throws Exception {
    String table = table();
    PostgresLogicalChangesSpec spec = spec(table);
    StreamLimits limits = StreamLimits.defaults().withSlotRetainedBytes(1024 * 1024);
    try (PostgresLogicalStream stream = stream(spec, limits, ROLE)) {
      StreamPosition start = stream.positionAt(Instant.now());
      pg.execute(
          "CREATE TABLE filler_" + table + " (v text)",
          "INSERT INTO filler_" + table + " SELECT md5(g::text) FROM generate_series(1, 40000) g");
      fails(
          () -> stream.read(start),
          StreamException.Kind.REFUSED,
          "BLOOM_PG_SLOT_MAX_RETAINED_BYTES");
      StreamStatus status = new StreamStatus();
      stream.describe(status);
      assertThat(status.getSlot()).isNull();
    }
    assertThat(LogicalPostgres.slotExists(spec.getSlot())).isFalse();
  }

  @Test
  void namesThatTryInjectionAreQuotedAsIdentifiers() throws Exception {
    String table = table();
    PostgresLogicalChangesSpec spec = spec(table);
    // Past the schema's patterns (as if they failed): still only names to the database.
    spec.setPublication("x\"; DROP TABLE " + table + "; --");
    try (PostgresLogicalStream stream = stream(spec)) {
      fails(() -> stream.positionAt(Instant.now()), StreamException.Kind.REFUSED, "does not exist");
    }
    PostgresLogicalChangesSpec slotted = spec(table);
    slotted.setSlot("s\" LOGICAL pgoutput; DROP TABLE " + table + "; --");
    try (PostgresLogicalStream stream = stream(slotted)) {
      assertThatThrownBy(() -> stream.positionAt(Instant.now()))
          .isInstanceOf(StreamException.class);
    }
    pg.execute("SELECT count(*) FROM " + table); // the table is still there
    assertThat(PgSlot.identifier("a\"b")).isEqualTo("\"a\"\"b\"");
  }

  @Test
  void aWideColumnPublishedBehindTheOperatorsBackIsRefusedWithoutBeingHeld() throws Exception {
    assertWideRowRefused(pg.url() + "?sslmode=disable", 8L << 20);
    // The server speaks TLS to the default sslmode (prefer): the bound applies above TLS. Closing
    // the TLS connection then decrypts and drops what the server had sent already, one record
    // (16 KiB) at a time: allocated and freed, never held together, so only less than the row.
    assertWideRowRefused(pg.url(), 32L << 20);
  }

  @Test
  void theStreamSpeaksTlsWhenTheSourceDoes() throws Exception {
    String table = table();
    PostgresLogicalChangesSpec spec = spec(table);
    try (PostgresLogicalStream stream =
            new PostgresLogicalStream(
                spec,
                KeyType.STRING,
                StreamLimits.defaults(),
                connector(pg.url() + "?sslmode=require", ROLE),
                null);
        // As the stream's role: pg_stat_ssl shows another role's sessions without their TLS.
        Connection c = pg.connect(ROLE, ROLE_PASSWORD);
        Statement s = c.createStatement()) {
      StreamPosition start = stream.positionAt(Instant.now());
      pg.execute("INSERT INTO " + table + " VALUES ('tls-1', 'x')");
      assertThat(readSame(stream, start)).containsExactly("tls-1");
      try (ResultSet ssl =
          s.executeQuery(
              "SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)"
                  + " WHERE s.ssl AND a.backend_type = 'walsender'")) {
        ssl.next();
        assertThat(ssl.getInt(1)).as("walsenders speaking TLS").isPositive();
      }
    }
  }

  private static void assertWideRowRefused(String url, long maxAllocated) throws Exception {
    String table = table();
    PostgresLogicalChangesSpec spec = spec(table);
    try (PostgresLogicalStream stream =
        new PostgresLogicalStream(
            spec, KeyType.STRING, StreamLimits.defaults(), connector(url, ROLE), null)) {
      StreamPosition start = stream.positionAt(Instant.now());
      assertThat(stream.read(start).adds()).isEmpty(); // streaming, checks passed
      // After the checks, the publication gains another table's 32 MiB column.
      pg.execute("CREATE TABLE wide_" + table + " (id text PRIMARY KEY, blob text)");
      pg.executeAsSuperuser("ALTER PUBLICATION pub_" + table + " ADD TABLE wide_" + table);
      pg.execute("INSERT INTO wide_" + table + " VALUES ('w', repeat(md5('x'), 1024 * 1024))");
      com.sun.management.ThreadMXBean threads =
          (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
      long before = threads.getCurrentThreadAllocatedBytes();
      fails(
          () -> readOn(stream, start),
          StreamException.Kind.REFUSED,
          "larger than the operator's bound");
      long allocated = threads.getCurrentThreadAllocatedBytes() - before;
      assertThat(allocated)
          .as("bytes allocated reading a 32 MiB row (" + url + ")")
          .isLessThan(maxAllocated);
      System.out.printf("a 32 MiB row refused (%s): %,d bytes allocated%n", url, allocated);
    }
  }
}
