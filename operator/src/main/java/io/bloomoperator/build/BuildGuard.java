package io.bloomoperator.build;

import io.bloomoperator.api.Durations;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.assemble.FilterTooLargeException;
import io.bloomoperator.settings.BuildLimits;
import io.bloomoperator.source.KeyLanes;
import io.bloomoperator.source.KeySink;
import io.bloomoperator.source.KeySource;
import io.bloomoperator.source.LineBlock;
import io.bloomoperator.source.SourceException;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Stops a build that holds shared capacity without progressing, so its build slot goes to another
 * filter: one whose source delivers no key for {@link BuildLimits#sourceStallTimeout()} while it
 * holds a slot (a query that returns one row and then sleeps), and any that runs longer than {@link
 * BuildLimits#maxBuildTime()} in total (a source trickling one key just inside the stall bound).
 *
 * <p>Stopping means {@link KeySource#cancel()} (which ends a read blocked on the network) and
 * refusing the next key, whichever comes first; the build then fails with {@link
 * Reasons#SOURCE_TIMEOUT} and a message naming the bound, and is retried with the usual backoff.
 * Waiting for a slot is not a stall: the bound starts when the slot is taken.
 */
public final class BuildGuard implements AutoCloseable {

  /** How often a build is looked at: the bounds are kept to within this. */
  static final Duration CHECK_EVERY = Duration.ofSeconds(1);

  /** Looks at every build; cancels run here too, and a cancel may wait on the network briefly. */
  private static final ScheduledThreadPoolExecutor CHECKS = checks();

  private final KeySource source;
  private final BuildLimits limits;
  private final BuildSlots.Slot slot;
  private final long started = System.nanoTime();
  private final AtomicLong keys = new AtomicLong();
  private final ScheduledFuture<?> check;
  private long seenKeys;
  private long lastProgress = started;
  private volatile String stopped;

  BuildGuard(KeySource source, BuildLimits limits, BuildSlots.Slot slot) {
    this.source = source;
    this.limits = limits;
    this.slot = slot;
    this.check =
        CHECKS.scheduleWithFixedDelay(
            this::check, CHECK_EVERY.toMillis(), CHECK_EVERY.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** A build from a source, as {@link #run} runs it. */
  @FunctionalInterface
  interface Build {
    FilterBuilder.Result from(KeySource source)
        throws SourceException, FilterTooLargeException, InterruptedException;
  }

  /**
   * Runs {@code build} from the guarded {@link #source()}; a build the guard stopped fails with the
   * guard's {@link #failure}, not with the error the cancel caused in the source.
   */
  FilterBuilder.Result run(Build build)
      throws SourceException, FilterTooLargeException, InterruptedException {
    try {
      return build.from(source());
    } catch (SourceException | RuntimeException e) {
      if (stopped()) {
        throw failure(e);
      }
      throw e;
    }
  }

  /** The source to build from: the guarded one, counting keys and refusing them once stopped. */
  KeySource source() {
    return new KeySource() {
      @Override
      public String description() {
        return source.description();
      }

      @Override
      public String changeToken() throws SourceException {
        return source.changeToken();
      }

      @Override
      public void readKeys(KeySink sink) throws SourceException {
        source.readKeys(new CountingSink(sink));
      }

      @Override
      public void cancel() {
        source.cancel();
      }
    };
  }

  /**
   * The failure to report for a build the guard stopped (the source's own error, {@code cause}, is
   * then only the consequence of the cancel): {@link Reasons#SOURCE_TIMEOUT} naming the bound.
   *
   * @throws IllegalStateException when the guard did not stop the build
   */
  SourceException failure(Exception cause) {
    String why = stopped;
    if (why == null) {
      throw new IllegalStateException("the build was not stopped", cause);
    }
    return new SourceException(Reasons.SOURCE_TIMEOUT, why, cause);
  }

  /** Whether the guard stopped the build. */
  boolean stopped() {
    return stopped != null;
  }

  @Override
  public void close() {
    check.cancel(false);
  }

  /** Runs on the checks' thread; the only writer of seenKeys and lastProgress. */
  private void check() {
    if (stopped != null) {
      return;
    }
    long now = System.nanoTime();
    long read = keys.getOpaque();
    if (read != seenKeys) {
      seenKeys = read;
      lastProgress = now;
    }
    if (now - started >= limits.maxBuildTime().toNanos()) {
      stop(
          "build stopped after "
              + Durations.format(limits.maxBuildTime())
              + ", the longest a build may run (operator limit BLOOM_MAX_BUILD_TIME); "
              + read
              + " keys read");
      return;
    }
    if (slot.held()) {
      long quietSince = Math.max(lastProgress, slot.heldSince());
      if (now - quietSince >= limits.sourceStallTimeout().toNanos()) {
        stop(
            "build stopped: the source delivered no key for "
                + Durations.format(limits.sourceStallTimeout())
                + " while the build held a build slot (operator limit BLOOM_SOURCE_STALL_TIMEOUT); "
                + read
                + " keys read");
      }
    }
  }

  private void stop(String why) {
    stopped = why;
    // Its namespace goes behind the others for the next slots (BuildSlots rule 2).
    slot.stalled();
    check.cancel(false);
    try {
      source.cancel();
    } catch (RuntimeException e) {
      // The next key is refused anyway.
    }
  }

  /** Counts keys for the stall check and refuses them once the build is stopped. */
  private final class CountingSink implements KeySink {
    private final KeySink sink;
    private long count;

    CountingSink(KeySink sink) {
      this.sink = sink;
    }

    private void tick() throws SourceException {
      tick(1);
    }

    private void tick(long lines) throws SourceException {
      String why = stopped;
      if (why != null) {
        throw new SourceException(Reasons.SOURCE_TIMEOUT, why);
      }
      // Opaque: the checks' thread needs to see the count move, not any order with other writes.
      count += lines;
      keys.setOpaque(count);
    }

    @Override
    public void line(String rawLine) throws SourceException {
      tick();
      sink.line(rawLine);
    }

    @Override
    public void lines(LineBlock block) throws SourceException {
      tick(block.count());
      sink.lines(block);
    }

    @Override
    public void value(String key) throws SourceException {
      tick();
      sink.value(key);
    }

    @Override
    public void value(long key) throws SourceException {
      tick();
      sink.value(key);
    }

    @Override
    public void nullValue() {
      // Rows all the same: a source of NULLs progresses. No exception can be thrown here; the
      // next key or the cancel ends a stopped build.
      keys.setOpaque(++count);
      sink.nullValue();
    }

    /**
     * The sink's lanes, their counts ticked as they are merged (on the build's thread): the keys of
     * a source's reading threads count for the stall check, and a stopped build refuses them there.
     */
    @Override
    public KeyLanes lanes() {
      return KeyLanes.beforeMerge(sink.lanes(), counts -> tick(counts.positions()));
    }
  }

  private static ScheduledThreadPoolExecutor checks() {
    ScheduledThreadPoolExecutor executor =
        new ScheduledThreadPoolExecutor(
            2,
            r -> {
              Thread thread = new Thread(r, "build-guard");
              thread.setDaemon(true);
              return thread;
            });
    executor.setRemoveOnCancelPolicy(true);
    return executor;
  }
}
