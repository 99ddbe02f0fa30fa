package io.bloomoperator.source;

import io.bloomoperator.api.Reasons;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One read of an http source with {@code urls} ({@link HttpUrlsSource}): each URL is a partition,
 * read whole by one reading thread, on as many threads at once as the build's own connection plus
 * the namespace's free share of {@link HttpSourceSettings#partitionConnections()} allow (never
 * waited for); each thread takes the next URL not read yet until none is left. With no share the
 * build's thread reads the URLs one after the other itself. Either way a URL is read exactly as a
 * single {@code url} is ({@link HttpSource}: egress checks, redirects, the Secret's headers for its
 * own origin only, gzip, line bound). Its lines go into the build through {@link
 * PartitionHandOver}: the {@link LineBlock}s they came in are handed to the build's thread until
 * the build's lanes are out (the first block or two), then each reading thread parses, hashes and
 * inserts its own lines through a lane ({@link KeyLanes}, the build's line rules) and hands only
 * their counts over. Every insert is an OR and counts are sums, so the filter is the one of the
 * bodies concatenated (each body ending its last line).
 *
 * <p><b>Limits.</b> The URLs share one deadline ({@code BLOOM_HTTP_MAX_READ_TIME} from the read's
 * start) and one {@link BodyBudget} ({@code BLOOM_HTTP_MAX_BODY_BYTES}): a list holds a build slot
 * no longer and reads no more than one URL may. Blocks in flight are at most one per reading thread
 * in the queue and one being filled per thread, each at most 512 KiB ({@link BoundedLines}); with
 * lanes, one being filled per thread, and what the build bounds per lane (docs/security.md).
 *
 * <p><b>Failures.</b> The first URL that fails (or the sink, or {@link #stop}) stops every other:
 * their downloads are cancelled, no further URL is started, and the read fails with that URL's
 * error, as a single URL's read would; the build publishes nothing.
 */
final class HttpPartitionedRead {

  private static final Logger LOG = LoggerFactory.getLogger(HttpPartitionedRead.class);

  /**
   * How long the build's thread waits for the reading threads to end after a stop (their requests
   * are cancelled, so they end at once); one still running afterwards keeps the share ({@link
   * PartitionThreads}).
   */
  private static final long JOIN_MILLIS = 10_000;

  /**
   * The drain's own bound past the deadline: every request is aborted at the deadline and its
   * thread fails, so this is reached only by a thread that never reports.
   */
  private static final long DRAIN_GRACE_NANOS = TimeUnit.SECONDS.toNanos(5);

  private final List<HttpSource> parts;
  private final PartitionShares shares;
  private final String namespace;
  private volatile PartitionHandOver handOver;
  private volatile boolean stopped;

  /**
   * @param parts the URLs, in the spec's order
   * @param shares the operator's table of extra connections for URL lists
   * @param namespace whose share the read takes
   */
  HttpPartitionedRead(List<HttpSource> parts, PartitionShares shares, String namespace) {
    this.parts = parts;
    this.shares = shares;
    this.namespace = namespace;
  }

  /**
   * Streams every URL's keys into {@code sink}, on the calling thread.
   *
   * @param deadline {@link System#nanoTime()} by which every URL must have been read
   * @param budget the body bytes all URLs may take together
   */
  void read(KeySink sink, long deadline, BodyBudget budget) throws SourceException {
    PartitionShares.Held extra = shares.take(namespace, parts.size() - 1);
    if (extra.count() == 0) {
      extra.close();
      for (HttpSource part : parts) {
        if (stopped) {
          throw new SourceException(Reasons.SOURCE_UNREADABLE, "the read was stopped");
        }
        part.read(sink, deadline, budget);
      }
      return;
    }
    int readers = 1 + extra.count();
    // The share goes back when the last reading thread has ended, not when the join gives up.
    PartitionThreads threads = new PartitionThreads(extra, readers, JOIN_MILLIS);
    PartitionHandOver keys = new PartitionHandOver(readers);
    handOver = keys;
    if (stopped) {
      keys.stop();
    }
    AtomicInteger next = new AtomicInteger();
    try {
      for (int i = 0; i < readers; i++) {
        threads.start(() -> work(next, keys, deadline, budget), "http-partition-" + i);
      }
      keys.drain(sink, deadline + DRAIN_GRACE_NANOS, this::tookTooLong);
    } finally {
      stop();
      threads.join();
    }
  }

  /** One reading thread: reads URLs not read yet until none is left, or the read stops. */
  private void work(AtomicInteger next, PartitionHandOver keys, long deadline, BodyBudget budget) {
    PartitionHandOver.Feed feed = keys.feed();
    boolean done = false;
    try {
      for (int i = next.getAndIncrement();
          i < parts.size() && !keys.stopped();
          i = next.getAndIncrement()) {
        parts.get(i).read(feed, deadline, budget);
      }
      feed.end();
      keys.ended();
      done = true;
    } catch (SourceException e) {
      fail(keys, e);
    } catch (PartitionHandOver.Stopped e) {
      // Another URL failed, or the build stopped the read.
    } catch (RuntimeException e) {
      // Its class only: a message may quote a body's bytes or a server's words.
      LOG.debug("a URL's reading thread failed: {}", e.getClass().getName());
    } finally {
      if (!done && !keys.stopped()) {
        // Not the operator's to show: whatever it was, it quotes nothing of a body here.
        fail(keys, new SourceException(Reasons.SOURCE_UNREADABLE, "a URL's read failed"));
      }
    }
  }

  private void fail(PartitionHandOver keys, SourceException e) {
    keys.fail(e);
    stop();
  }

  /**
   * Ends every URL's download at once and starts no other; from any thread. The read then fails
   * (with the first URL's failure, if one caused the stop).
   */
  void stop() {
    stopped = true;
    PartitionHandOver keys = handOver;
    if (keys != null) {
      keys.stop();
    }
    for (HttpSource part : parts) {
      part.cancel();
    }
  }

  private SourceException tookTooLong() {
    return new SourceException(
        Reasons.SOURCE_TIMEOUT,
        "reading the "
            + parts.size()
            + " URLs took longer than the operator's BLOOM_HTTP_MAX_READ_TIME");
  }
}
