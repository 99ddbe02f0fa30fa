package io.bloomoperator.cli;

import io.bloomoperator.source.KeyLanes;
import io.bloomoperator.source.KeySink;
import io.bloomoperator.source.KeySource;
import io.bloomoperator.source.SourceException;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * Reports on stderr how far a read has got: every {@value #LINES_EVERY} lines or every few seconds,
 * whichever comes first, and which pass of the build it is (sizing may read twice).
 */
final class ProgressSource implements KeySource {

  static final long LINES_EVERY = 1L << 20;
  private static final long CLOCK_EVERY = 1L << 14;
  private static final long INTERVAL_NANOS = 5_000_000_000L;

  private final KeySource delegate;
  private final PrintWriter err;
  private final LongSupplier nanoClock;
  private int passes;

  ProgressSource(KeySource delegate, PrintWriter err, LongSupplier nanoClock) {
    this.delegate = delegate;
    this.err = err;
    this.nanoClock = nanoClock;
  }

  /** How many times the source has been read (started). */
  int passes() {
    return passes;
  }

  @Override
  public String description() {
    return delegate.description();
  }

  @Override
  public String changeToken() throws SourceException {
    return delegate.changeToken();
  }

  @Override
  public void readKeys(KeySink sink) throws SourceException {
    int pass = ++passes;
    long started = nanoClock.getAsLong();
    Counting counting = new Counting(sink, pass, started);
    delegate.readKeys(counting);
    long millis = (nanoClock.getAsLong() - started) / 1_000_000;
    if (millis >= 1000 || counting.lines >= LINES_EVERY) {
      err.printf(
          Locale.ROOT,
          "pass %d: read %,d lines in %.1f s%n",
          pass,
          counting.lines,
          millis / 1000.0);
      err.flush();
    }
  }

  private final class Counting implements KeySink {
    private final KeySink sink;
    private final int pass;
    private long lines;
    private long lastReport;

    Counting(KeySink sink, int pass, long started) {
      this.sink = sink;
      this.pass = pass;
      this.lastReport = started;
    }

    @Override
    public void line(String rawLine) throws SourceException {
      sink.line(rawLine);
      tick();
    }

    @Override
    public void value(String key) throws SourceException {
      sink.value(key);
      tick();
    }

    @Override
    public void value(long key) throws SourceException {
      sink.value(key);
      tick();
    }

    @Override
    public void nullValue() {
      sink.nullValue();
      tick();
    }

    /** The lines of a source's reading threads, counted as their counts are merged. */
    @Override
    public KeyLanes lanes() {
      return KeyLanes.beforeMerge(sink.lanes(), counts -> tick(counts.positions()));
    }

    private void tick() {
      tick(1);
    }

    /** Counts {@code read} more lines; reports each multiple of the report steps passed. */
    private void tick(long read) {
      long before = lines;
      lines += read;
      boolean due = before / LINES_EVERY != lines / LINES_EVERY;
      if (!due && before / CLOCK_EVERY != lines / CLOCK_EVERY) {
        due = nanoClock.getAsLong() - lastReport >= INTERVAL_NANOS;
      }
      if (due) {
        lastReport = nanoClock.getAsLong();
        err.printf(Locale.ROOT, "pass %d: %,d lines read%n", pass, lines);
        err.flush();
      }
    }
  }
}
