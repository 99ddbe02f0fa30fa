package io.bloomoperator.assemble;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.snapshot.KeyInserter;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.source.BodySource;
import io.bloomoperator.source.GeneratedLines;
import io.bloomoperator.source.KeyLanes;
import io.bloomoperator.source.KeySink;
import io.bloomoperator.source.KeySource;
import io.bloomoperator.source.LineParser;
import io.bloomoperator.source.SourceException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A build on several threads gives the bytes, counts, progress and failures of a build on one
 * thread from the same keys handed over line by line as Strings.
 */
class ParallelBuildTest {

  @ParameterizedTest
  @EnumSource(KeyType.class)
  void sameBytesAndCountsOnAnyNumberOfThreads(KeyType type) throws Exception {
    byte[] body = body(new Random(7), 1_500_000);
    FilterBuilder.Request request =
        new FilterBuilder.Request(type, 0.01, null, 1_000_000, 1L << 30);

    List<Long> expectedProgress = new ArrayList<>();
    FilterBuilder.Result expected =
        new FilterBuilder(expectedProgress::add)
            .build(lineByLine(BodySource.of(body, 1024)), request);
    assertThat(expected.keys()).isGreaterThan(FilterBuilder.PROGRESS_EVERY);

    for (int threads : new int[] {1, 2, 4}) {
      List<Long> progress = new ArrayList<>();
      FilterBuilder.Result built =
          new FilterBuilder(progress::add, BuildWorkers.of(threads, 1))
              .build(BodySource.of(body, 1024), request);
      assertThat(built.bits()).as("bits on %d threads", threads).isEqualTo(expected.bits());
      assertThat(built.keys()).isEqualTo(expected.keys());
      assertThat(built.malformed()).isEqualTo(expected.malformed());
      assertThat(built.nulls()).isEqualTo(expected.nulls());
      assertThat(progress).isEqualTo(expectedProgress);
      if (threads == 1) {
        assertThat(built.probableDuplicates()).isEqualTo(expected.probableDuplicates());
      }
    }
  }

  /**
   * A source whose threads put their keys through lanes (a partitioned jdbc read): the Guava
   * layout's bytes and counts of one thread, on builds of 1, 2 and 4 threads (atomic ORs beside the
   * reader's), and the malformed-key limit still fails the build with the count at the limit.
   */
  @ParameterizedTest
  @EnumSource(KeyType.class)
  void aSourceReadingOnSeveralThreadsGivesTheBytesAndCountsOfOneThread(KeyType type)
      throws Exception {
    byte[] body = body(new Random(5), 100_000);
    for (int parts : new int[] {1, 2, 4}) {
      FilterBuilder.Request request =
          new FilterBuilder.Request(type, 0.01, null, 1_000_000, 1L << 30);
      FilterBuilder.Result expected =
          new FilterBuilder().build(lanes(300_000, body, 0, parts), request);
      if (type == KeyType.LONG) {
        assertThat(expected.malformed()).as("non-numbers among Long keys").isPositive();
      }
      for (int threads : new int[] {1, 2, 4}) {
        FilterBuilder.Result built =
            new FilterBuilder(k -> {}, BuildWorkers.of(threads, 1))
                .build(lanes(300_000, body, parts, parts), request);
        assertThat(built.bits())
            .as("%d parts, %d threads", parts, threads)
            .isEqualTo(expected.bits());
        assertThat(built.keys()).isEqualTo(expected.keys());
        assertThat(built.malformed()).isEqualTo(expected.malformed());
        assertThat(built.nulls()).isEqualTo(expected.nulls()).isEqualTo(300);
      }
    }
    FilterBuilder.Request limited =
        new FilterBuilder.Request(KeyType.LONG, 0.01, 400_000L, 3, 1L << 30);
    assertThat(
            failure(
                new FilterBuilder(k -> {}, BuildWorkers.of(2, 1)),
                lanes(300_000, null, 4, 4),
                limited))
        .startsWith("MalformedKeys: 4 value(s) are not Long keys");
  }

  @Test
  void theMalformedKeyLimitFailsAtTheSameLine() throws Exception {
    byte[] body = body(new Random(11), 1_200_000);
    for (long max : new long[] {0, 3, 1000}) {
      FilterBuilder.Request request =
          new FilterBuilder.Request(KeyType.LONG, 0.01, 2_000_000L, max, 1L << 30);
      String expected =
          failure(new FilterBuilder(), lineByLine(BodySource.of(body, 1024)), request);
      assertThat(expected).contains("MalformedKeys");
      String parallel =
          failure(
              new FilterBuilder(k -> {}, BuildWorkers.of(4, 1)),
              BodySource.of(body, 1024),
              request);
      assertThat(parallel).isEqualTo(expected);
    }
  }

  @Test
  void helpersInsertAndAreDoneWhenTheFillCloses() throws Exception {
    Set<Thread> inserters = ConcurrentHashMap.newKeySet();
    AtomicLong puts = new AtomicLong();
    KeyInserter recording = recording(inserters, puts);
    ParallelFill fill =
        new ParallelFill(
            KeyType.STRING,
            0,
            () -> ParallelFill.Inserters.of(recording),
            BuildWorkers.of(2, 1),
            k -> {});
    try (fill) {
      BodySource.generated("key-", 3_000_000).readKeys(fill);
      fill.finish();
    }
    long atClose = puts.get();
    Thread.sleep(50);
    assertThat(puts.get()).isEqualTo(atClose).isEqualTo(3_000_000);
    assertThat(fill.parser().keys()).isEqualTo(3_000_000);
    assertThat(inserters).as("threads that inserted keys").hasSize(2);
  }

  /**
   * The operator's http client returns a few KiB per read and reports nothing more available, so
   * the source hands over a block of ~100 lines per read: the helpers must still get the work.
   */
  @Test
  void smallBlocksOfAnHttpClientStillReachTheHelpers() throws Exception {
    Set<Thread> inserters = ConcurrentHashMap.newKeySet();
    AtomicLong puts = new AtomicLong();
    KeyInserter recording = recording(inserters, puts);
    try (ParallelFill fill =
        new ParallelFill(
            KeyType.STRING,
            0,
            () -> ParallelFill.Inserters.of(recording),
            BuildWorkers.of(2, 1),
            k -> {})) {
      smallReads(() -> new GeneratedLines("key-", 1_000_000)).readKeys(fill);
      fill.finish();
    }
    assertThat(puts.get()).isEqualTo(1_000_000);
    assertThat(inserters).as("threads that inserted keys").hasSize(2);
  }

  @ParameterizedTest
  @EnumSource(KeyType.class)
  void smallBlocksGiveTheBitsAndFailuresOfOneThread(KeyType type) throws Exception {
    byte[] body = body(new Random(13), 600_000);
    FilterBuilder.Request request =
        new FilterBuilder.Request(type, 0.01, null, 1_000_000, 1L << 30);
    FilterBuilder.Result expected =
        new FilterBuilder().build(lineByLine(BodySource.of(body, 1024)), request);
    FilterBuilder.Result built =
        new FilterBuilder(k -> {}, BuildWorkers.of(2, 1))
            .build(smallReads(() -> new ByteArrayInputStream(body)), request);
    assertThat(built.bits()).isEqualTo(expected.bits());
    assertThat(built.keys()).isEqualTo(expected.keys());
    assertThat(built.malformed()).isEqualTo(expected.malformed());
    assertThat(built.nulls()).isEqualTo(expected.nulls());
    for (long max : new long[] {0, 3, 1000}) {
      FilterBuilder.Request limited =
          new FilterBuilder.Request(KeyType.LONG, 0.01, 2_000_000L, max, 1L << 30);
      assertThat(
              failure(
                  new FilterBuilder(k -> {}, BuildWorkers.of(2, 1)),
                  smallReads(() -> new ByteArrayInputStream(body)),
                  limited))
          .isEqualTo(failure(new FilterBuilder(), lineByLine(BodySource.of(body, 1024)), limited));
    }
  }

  /**
   * {@code body} read as the operator's http client gives a body: 1 KiB per read, none available.
   */
  static BodySource smallReads(Supplier<InputStream> body) {
    return BodySource.of(
        () ->
            new FilterInputStream(body.get()) {
              @Override
              public int read(byte[] b, int off, int len) throws IOException {
                return super.read(b, off, Math.min(len, 1024));
              }

              @Override
              public int available() {
                return 0;
              }
            },
        1024);
  }

  @Test
  void aFailingSourceLeavesNoHelperWorking() throws Exception {
    AtomicLong puts = new AtomicLong();
    KeyInserter recording = recording(ConcurrentHashMap.newKeySet(), puts);
    KeySource failing = resetAfter(2_000_000);
    FilterBuilder.Request request =
        new FilterBuilder.Request(KeyType.STRING, 0.01, 3_000_000L, 0, 1L << 30);
    ParallelFill fill =
        new ParallelFill(
            KeyType.STRING,
            0,
            () -> ParallelFill.Inserters.of(recording),
            BuildWorkers.of(4, 1),
            k -> {});
    try (fill) {
      assertThatThrownBy(() -> failing.readKeys(fill)).hasMessageContaining("connection reset");
    }
    long atClose = puts.get();
    Thread.sleep(50);
    assertThat(puts.get()).isEqualTo(atClose);
    assertThat(failure(new FilterBuilder(k -> {}, BuildWorkers.of(4, 1)), failing, request))
        .contains("connection reset");
  }

  /** {@code key-0} … {@code key-(lines - 1)}, then the connection is reset. */
  static KeySource resetAfter(int lines) {
    return BodySource.of(
        () ->
            new SequenceInputStream(
                new GeneratedLines("key-", lines),
                new InputStream() {
                  @Override
                  public int read() throws IOException {
                    throw new IOException("connection reset");
                  }
                }),
        1024);
  }

  /**
   * Keys that come one by one (JDBC rows), or in blocks the reader parses itself, are inserted with
   * plain writes while no helper inserts (atomic ones made the reader 1.65x slower in the 100M-key
   * ScaleBenchmark, docs/benchmarks.md); a source that sends rows and then blocks switches to
   * atomic writes at the first block a helper takes. Either way the bits are those of one thread.
   */
  @ParameterizedTest
  @EnumSource(KeyType.class)
  void rowsOneByOneThenBlocksGiveTheBitsOfOneThread(KeyType type) throws Exception {
    byte[] body = body(new Random(13), 600_000);
    FilterBuilder.Request request =
        new FilterBuilder.Request(type, 0.01, 2_000_000L, 1_000_000, 1L << 30);
    for (KeySource source :
        new KeySource[] {rows(type, 400_000, null), rows(type, 400_000, body)}) {
      FilterBuilder.Result expected = new FilterBuilder().build(source, request);
      for (int threads : new int[] {2, 4}) {
        FilterBuilder.Result built =
            new FilterBuilder(k -> {}, BuildWorkers.of(threads, 1)).build(source, request);
        assertThat(built.bits()).as("bits on %d threads", threads).isEqualTo(expected.bits());
        assertThat(built.keys()).isEqualTo(expected.keys());
        assertThat(built.nulls()).isEqualTo(expected.nulls()).isEqualTo(400);
        assertThat(built.malformed()).isEqualTo(expected.malformed());
      }
    }
  }

  @Test
  void rowsGoThroughTheExclusiveWayUntilABlockIsHandedOver() throws Exception {
    AtomicLong exclusive = new AtomicLong();
    AtomicLong shared = new AtomicLong();
    ParallelFill.Inserters ways =
        new ParallelFill.Inserters(
            recording(ConcurrentHashMap.newKeySet(), exclusive),
            recording(ConcurrentHashMap.newKeySet(), shared));
    try (ParallelFill fill =
        new ParallelFill(KeyType.STRING, 0, () -> ways, BuildWorkers.of(2, 1), k -> {})) {
      rows(KeyType.STRING, 100_000, null).readKeys(fill);
      fill.finish();
      assertThat(exclusive.get()).isEqualTo(100_000 - 100);
      assertThat(shared.get()).isZero();
      BodySource.generated("key-", 3_000_000).readKeys(fill);
      fill.finish();
      assertThat(shared.get()).as("keys inserted after the first hand-over").isPositive();
      assertThat(exclusive.get() + shared.get()).isEqualTo(100_000 - 100 + 3_000_000);
    }
  }

  /**
   * A source sending {@code count} typed values as a JDBC source does (every 1000th a NULL, longs
   * for Long filters, text for String filters), then {@code body} in blocks if not null.
   */
  static KeySource rows(KeyType type, int count, byte[] body) {
    return new KeySource() {
      @Override
      public String description() {
        return "rows";
      }

      @Override
      public String changeToken() {
        return null;
      }

      @Override
      public void readKeys(KeySink sink) throws SourceException {
        for (int i = 0; i < count; i++) {
          if (i % 1000 == 0) {
            sink.nullValue();
          } else if (type == KeyType.LONG) {
            sink.value(i * 7919L);
          } else {
            sink.value("row-" + i);
          }
        }
        if (body != null) {
          BodySource.of(body, 1024).readKeys(sink);
        }
      }
    };
  }

  /**
   * Rows as values (numbers, their text, a NULL every 1000th, a non-number every 997th: malformed
   * for Long keys), then {@code body} once per part as lines, cut into {@code parts} parts that
   * threads of their own put through the sink's lanes ({@link KeyLanes}) as a partitioned jdbc read
   * does: the first 100 rows on the caller's thread, then the lanes asked for, counts handed back
   * every 1,000 rows. With 0 parts: the same keys (the body {@code parts} times), all on the
   * caller's thread, the reference. A read whose merge fails stops its threads before it throws.
   */
  static KeySource lanes(int count, byte[] body, int parts, int referenceParts) {
    return new KeySource() {
      @Override
      public String description() {
        return "lanes";
      }

      @Override
      public String changeToken() {
        return null;
      }

      @Override
      public void readKeys(KeySink sink) throws SourceException {
        int first = Math.min(count, 100);
        for (int i = 0; i < first; i++) {
          row(sink, i);
        }
        KeyLanes lanes = parts == 0 ? null : sink.lanes();
        if (lanes == null) {
          for (int i = first; i < count; i++) {
            row(sink, i);
          }
          for (int p = 0; p < (parts == 0 ? referenceParts : parts) && body != null; p++) {
            BodySource.of(body, 1024).readKeys(sink);
          }
          return;
        }
        Object end = new Object();
        BlockingQueue<Object> handOver = new LinkedBlockingQueue<>();
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < parts; p++) {
          int part = p;
          Thread t =
              new Thread(
                  () -> {
                    try {
                      KeyLanes.Lane lane = lanes.lane();
                      int n = 0;
                      for (int i = first + part; i < count && !stop.get(); i += parts) {
                        row(lane, i);
                        if (++n % 1000 == 0) {
                          handOver.add(lane.take());
                        }
                      }
                      if (body != null && !stop.get()) {
                        BodySource.of(body, 1024).readKeys(lane);
                      }
                      lane.flush();
                      handOver.add(lane.take());
                    } catch (SourceException | RuntimeException e) {
                      handOver.add(e);
                    } finally {
                      handOver.add(end);
                    }
                  },
                  "lane-" + p);
          threads.add(t);
          t.start();
        }
        try {
          for (int ended = 0; ended < parts; ) {
            Object next = handOver.take();
            if (next == end) {
              ended++;
            } else if (next instanceof LineParser.Counts counts) {
              lanes.merge(counts);
            } else {
              throw new IllegalStateException("a lane failed", (Throwable) next);
            }
          }
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        } finally {
          stop.set(true);
          for (Thread t : threads) {
            try {
              t.join();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
        }
      }
    };
  }

  private static void row(KeySink sink, int i) throws SourceException {
    if (i % 1000 == 999) {
      sink.nullValue();
    } else if (i % 997 == 0) {
      sink.value("x" + i);
    } else if (i % 3 == 0) {
      sink.value(Long.toString(i * 7919L));
    } else {
      sink.value(i * 7919L);
    }
  }

  /** An inserter that records which threads insert and counts the keys. */
  static KeyInserter recording(Set<Thread> threads, AtomicLong puts) {
    return new KeyInserter() {
      @Override
      public boolean putString(String key) {
        return put();
      }

      @Override
      public boolean putUtf8(byte[] utf8, int offset, int length) {
        return put();
      }

      @Override
      public boolean putLong(long key) {
        return put();
      }

      private boolean put() {
        threads.add(Thread.currentThread());
        puts.incrementAndGet();
        return true;
      }
    };
  }

  static String failure(FilterBuilder builder, KeySource source, FilterBuilder.Request r)
      throws Exception {
    try {
      builder.build(source, r);
      return "no failure";
    } catch (SourceException e) {
      return e.reason() + ": " + e.getMessage();
    }
  }

  /** Keys, duplicates, blank and comment lines, CR LF, non-ASCII and a few non-numbers. */
  static byte[] body(Random random, int lines) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int i = 0; i < lines; i++) {
      int r = random.nextInt(1000);
      String line;
      if (r < 5) {
        line = "";
      } else if (r < 8) {
        line = "# comment " + i;
      } else if (r < 10) {
        line = "key-" + i + "-é";
      } else if (r < 11) {
        line = "x" + i;
      } else if (r < 100) {
        line = Integer.toString(random.nextInt(Math.max(1, i)));
      } else {
        line = " " + i + "\t";
      }
      out.writeBytes(line.getBytes(StandardCharsets.UTF_8));
      out.writeBytes(r % 3 == 0 ? new byte[] {'\r', '\n'} : new byte[] {'\n'});
    }
    return out.toByteArray();
  }

  /** {@code source} with its lines handed over one by one as Strings, as before blocks. */
  static KeySource lineByLine(KeySource source) {
    return new KeySource() {
      @Override
      public String description() {
        return source.description();
      }

      @Override
      public String changeToken() throws SourceException {
        return null;
      }

      @Override
      public void readKeys(KeySink sink) throws SourceException {
        source.readKeys(
            new KeySink() {
              @Override
              public void line(String rawLine) throws SourceException {
                sink.line(rawLine);
              }

              @Override
              public void value(String key) throws SourceException {
                sink.value(key);
              }

              @Override
              public void value(long key) throws SourceException {
                sink.value(key);
              }

              @Override
              public void nullValue() {
                sink.nullValue();
              }
            });
      }
    };
  }
}
