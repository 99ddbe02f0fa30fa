package io.bloomoperator.build;

import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.changes.ScanStart;
import io.bloomoperator.changes.StreamException;
import io.bloomoperator.changes.StreamPosition;
import io.bloomoperator.run.FilterRun;
import io.bloomoperator.snapshot.BitPositions;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.source.ExportedSnapshot;
import io.bloomoperator.source.JdbcSource;
import io.bloomoperator.source.KeySource;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What a build and a stream publish need of the change stream, kept out of both. */
final class StreamPublish {

  private static final Logger LOG = LoggerFactory.getLogger(StreamPublish.class);

  static final String EVENT_STREAM_FAILED = "ChangeStreamFailed";

  private StreamPublish() {}

  /**
   * Where a full build starting now resumes the stream and how its scan must read; {@link
   * ScanStart#none()} when the filter has no stream or the stream cannot say: the version is then
   * published without a position and the stream waits for the next full build (said in an event).
   * Close it once the scan is done.
   */
  static ScanStart start(FilterRun ctx, io.bloomoperator.metrics.BuildMetrics metrics) {
    if (ctx.changes() == null) {
      return ScanStart.none();
    }
    if (ctx.changes().waiting(ctx.now()).isPresent()) {
      // Failing lately (the status says so): the build does not wait on a broker that likely
      // does not answer; the stream resumes after the next full build.
      LOG.debug(
          "{}/{}: change stream backing off; built without a position",
          ctx.namespace(),
          ctx.name());
      return ScanStart.none();
    }
    try {
      return ctx.changes().startFor(ctx.now(), ctx.now());
    } catch (StreamException e) {
      metrics.streamFailed(e.tag());
      LOG.warn(
          "{}/{}: change stream position not known before the build: {}",
          ctx.namespace(),
          ctx.name(),
          e.getMessage());
      ctx.events()
          .warning(
              ctx.filter(),
              EVENT_STREAM_FAILED,
              "the stream position could not be read before the full build ("
                  + e.getMessage()
                  + "); the stream resumes after the next full build");
      return ScanStart.none();
    }
  }

  /**
   * What a full build scans and the stream position it records; close it once the scan is done
   * (that releases what holds the stream's snapshot).
   *
   * @param source the filter's source, or the same reading in the stream's exported snapshot
   */
  record Scan(ScanStart start, KeySource source) implements AutoCloseable {

    /** The position's text form, or null: none. */
    String position() {
      return start.position().map(StreamPosition::text).orElse(null);
    }

    @Override
    public void close() {
      start.close();
    }
  }

  /**
   * {@link #start}, and the source to scan for it: the filter's, reading in the start's snapshot
   * when its position holds only for such a scan. A source that cannot read in it (only a
   * PostgreSQL jdbc source can, and only such a source has a stream that exports one) is read as it
   * is and the position dropped: a position not consistent with the scan is never published.
   */
  static Scan scan(FilterRun ctx, io.bloomoperator.metrics.BuildMetrics metrics) {
    ScanStart start = start(ctx, metrics);
    Optional<ExportedSnapshot> snapshot = start.snapshot();
    if (snapshot.isEmpty()) {
      return new Scan(start, ctx.source());
    }
    if (ctx.source() instanceof JdbcSource jdbc) {
      try {
        return new Scan(start, jdbc.inSnapshot(snapshot.get()));
      } catch (IllegalStateException e) {
        // Not a PostgreSQL source: below.
      }
    }
    start.close();
    LOG.warn("{}/{}: the source cannot read in the stream's snapshot", ctx.namespace(), ctx.name());
    return new Scan(ScanStart.none(), ctx.source());
  }

  /**
   * {@code base} (the published version's bits) with {@code adds} added and the bits at {@code
   * clears} cleared (counting deletions: their counters are 0), as a build's result; {@code
   * removed} keys leave the key count.
   */
  static FilterBuilder.Result withChanges(
      BloomFilterBits base,
      Manifest published,
      List<String> adds,
      long[] clears,
      long removed,
      long startedNanos) {
    BloomFilterBits.Builder builder = BloomFilterBits.builder(base);
    boolean longs = base.keyType() == KeyType.LONG;
    // Only keys that set a bit are counted: an event read twice, or an update of a key the build
    // had, would otherwise grow the count and make the next full build look like a drop.
    long added = 0;
    for (String key : adds) {
      if (longs ? builder.putLong(Long.parseLong(key)) : builder.putString(key)) {
        added++;
      }
    }
    BloomFilterBits bits = builder.build();
    if (clears.length > 0) {
      // After the adds: a bit an add of this batch set and a later delete brought back to 0 is
      // cleared; one a later add brought back above 0 is not among the clears.
      bits = BitPositions.withCleared(bits, clears, clears.length);
    }
    return new FilterBuilder.Result(
        bits,
        Math.max(0, published.keyCount() + added - removed),
        0,
        0,
        0,
        Duration.ofNanos(System.nanoTime() - startedNanos));
  }
}
