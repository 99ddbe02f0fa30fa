package io.bloomoperator.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.source.KeySink;
import io.bloomoperator.source.KeySource;
import io.bloomoperator.source.LineParser;
import io.bloomoperator.source.SourceException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ProgressSourceTest {

  /** {@code lines} lines; the fake clock advances {@code nanosPerLine} per line. */
  private static KeySource lines(long lines, AtomicLong clock, long nanosPerLine) {
    return new KeySource() {
      @Override
      public String description() {
        return "generated";
      }

      @Override
      public String changeToken() {
        return null;
      }

      @Override
      public void readKeys(KeySink sink) throws SourceException {
        for (long i = 0; i < lines; i++) {
          clock.addAndGet(nanosPerLine);
          sink.line("k" + (i & 1023));
        }
      }
    };
  }

  private static LineParser counter() {
    return new LineParser(
        KeyType.STRING,
        new LineParser.KeyConsumer() {
          @Override
          public void putString(String key) {}

          @Override
          public void putLong(long key) {}
        },
        0);
  }

  @Test
  void reportsEveryMillionLinesAndCountsPasses() throws Exception {
    StringWriter err = new StringWriter();
    AtomicLong clock = new AtomicLong();
    ProgressSource source =
        new ProgressSource(
            lines(2 * ProgressSource.LINES_EVERY + 5, clock, 0),
            new PrintWriter(err, true),
            clock::get);
    LineParser parser = counter();
    source.readKeys(parser);
    source.readKeys(counter());

    assertThat(parser.keys()).isEqualTo(2 * ProgressSource.LINES_EVERY + 5);
    assertThat(source.passes()).isEqualTo(2);
    assertThat(err.toString())
        .contains(
            "pass 1: 1,048,576 lines read",
            "pass 1: 2,097,152 lines read",
            "pass 1: read 2,097,157 lines",
            "pass 2: 1,048,576 lines read");
  }

  @Test
  void reportsEveryFewSecondsOnSlowSources() throws Exception {
    StringWriter err = new StringWriter();
    AtomicLong clock = new AtomicLong();
    // 100,000 lines at 1 ms each: 100 s, no million-line mark, but a report every ~5 s.
    ProgressSource source =
        new ProgressSource(
            lines(100_000, clock, 1_000_000), new PrintWriter(err, true), clock::get);
    source.readKeys(counter());
    long reports = err.toString().lines().filter(l -> l.endsWith("lines read")).count();
    assertThat(reports).isBetween(5L, 21L);
    assertThat(err.toString()).contains("pass 1: read 100,000 lines in 100.0 s");
  }

  @Test
  void quietForSmallFastReads() throws Exception {
    StringWriter err = new StringWriter();
    AtomicLong clock = new AtomicLong();
    new ProgressSource(lines(1_000, clock, 0), new PrintWriter(err, true), clock::get)
        .readKeys(counter());
    assertThat(err.toString()).isEmpty();
  }
}
