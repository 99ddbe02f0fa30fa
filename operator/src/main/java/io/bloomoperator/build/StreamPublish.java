package io.bloomoperator.build;

import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.changes.StreamException;
import io.bloomoperator.run.FilterRun;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What a build and a stream publish need of the change stream, kept out of both. */
final class StreamPublish {

  private static final Logger LOG = LoggerFactory.getLogger(StreamPublish.class);

  static final String EVENT_STREAM_FAILED = "ChangeStreamFailed";

  private StreamPublish() {}

  /**
   * The stream position a full build starting now resumes from (its text form), or null when the
   * filter has no stream or the stream cannot say: the version is then published without one and
   * the stream waits for the next full build (said in an event).
   */
  static String startPosition(FilterRun ctx, io.bloomoperator.metrics.BuildMetrics metrics) {
    if (ctx.changes() == null) {
      return null;
    }
    if (ctx.changes().waiting(ctx.now()).isPresent()) {
      // Failing lately (the status says so): the build does not wait on a broker that likely
      // does not answer; the stream resumes after the next full build.
      LOG.debug(
          "{}/{}: change stream backing off; built without a position",
          ctx.namespace(),
          ctx.name());
      return null;
    }
    try {
      return ctx.changes().startFor(ctx.now(), ctx.now()).text();
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
      return null;
    }
  }

  /** {@code base} (the published version's bits) with {@code adds} added, as a build's result. */
  static FilterBuilder.Result withAdds(
      BloomFilterBits base, Manifest published, List<String> adds, long startedNanos) {
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
    return new FilterBuilder.Result(
        builder.build(),
        published.keyCount() + added,
        0,
        0,
        0,
        Duration.ofNanos(System.nanoTime() - startedNanos));
  }
}
