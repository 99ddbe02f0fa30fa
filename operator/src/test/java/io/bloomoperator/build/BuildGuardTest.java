package io.bloomoperator.build;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.settings.BuildLimits;
import io.bloomoperator.source.KeySink;
import io.bloomoperator.source.KeySource;
import io.bloomoperator.source.SourceException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The two bounds of {@link BuildGuard}, with sources that block until cancelled. */
@Timeout(30)
class BuildGuardTest {

  @Test
  void aSourceSilentWhileHoldingASlotIsCancelledAfterTheStallTimeout() throws Exception {
    BuildSlots slots = new BuildSlots(2);
    BlockingSource source = new BlockingSource(1, Duration.ZERO);
    long start = System.nanoTime();
    try (BuildSlots.Slot slot = slots.slot("ns");
        BuildGuard guard = new BuildGuard(source, limits(Duration.ofSeconds(2), 60), slot)) {
      assertThatThrownBy(() -> readWithSlot(guard, slot))
          .isInstanceOf(SourceException.class)
          .satisfies(e -> assertThat(guard.stopped()).isTrue());
      SourceException failure = guard.failure(new SourceException("x", "cancelled"));
      assertThat(failure.reason()).isEqualTo(Reasons.SOURCE_TIMEOUT);
      assertThat(failure.getMessage()).contains("BLOOM_SOURCE_STALL_TIMEOUT").contains("1 keys");
    }
    assertThat(source.cancelled.getCount()).isZero();
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .isBetween(Duration.ofSeconds(2), Duration.ofSeconds(5));
    assertThat(slots.available()).isEqualTo(2);
  }

  @Test
  void aSourceSilentBeforeItsFirstKeyHoldsNoSlotAndIsNotAStall() throws Exception {
    BlockingSource source = new BlockingSource(0, Duration.ofSeconds(3));
    BuildSlots slots = new BuildSlots(1);
    try (BuildSlots.Slot slot = slots.slot("ns");
        BuildGuard guard = new BuildGuard(source, limits(Duration.ofSeconds(1), 60), slot)) {
      readWithSlot(guard, slot); // the source ends by itself after 3 s
      assertThat(guard.stopped()).isFalse();
    }
  }

  @Test
  void aTricklingSourceIsStoppedAtTheMaximumBuildTime() throws Exception {
    KeySource trickle =
        new KeySource() {
          @Override
          public String description() {
            return "trickle";
          }

          @Override
          public String changeToken() {
            return null;
          }

          @Override
          public void readKeys(KeySink sink) throws SourceException {
            for (int i = 0; ; i++) {
              sink.line("k" + i);
              try {
                Thread.sleep(200);
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
            }
          }
        };
    BuildSlots slots = new BuildSlots(1);
    try (BuildSlots.Slot slot = slots.slot("ns");
        BuildGuard guard = new BuildGuard(trickle, limits(Duration.ofSeconds(1), 3), slot)) {
      assertThatThrownBy(() -> readWithSlot(guard, slot))
          .isInstanceOf(SourceException.class)
          .hasMessageContaining("BLOOM_MAX_BUILD_TIME");
    }
  }

  private static BuildLimits limits(Duration stall, long maxSeconds) {
    return new BuildLimits(8, stall, Duration.ofSeconds(maxSeconds));
  }

  /** Reads like a build: the slot is taken at the first key. */
  private static void readWithSlot(BuildGuard guard, BuildSlots.Slot slot) throws SourceException {
    guard
        .source()
        .readKeys(
            new KeySink() {
              @Override
              public void line(String rawLine) {
                try {
                  slot.reserve();
                } catch (InterruptedException e) {
                  throw new IllegalStateException(e);
                }
              }

              @Override
              public void value(String key) {}

              @Override
              public void value(long key) {}

              @Override
              public void nullValue() {}
            });
  }

  /**
   * Sends {@code keys} keys, then blocks until cancelled (or for {@code endAfter}, if not zero).
   */
  private static final class BlockingSource implements KeySource {
    final CountDownLatch cancelled = new CountDownLatch(1);
    private final int keys;
    private final Duration endAfter;

    BlockingSource(int keys, Duration endAfter) {
      this.keys = keys;
      this.endAfter = endAfter;
    }

    @Override
    public String description() {
      return "blocking";
    }

    @Override
    public String changeToken() {
      return null;
    }

    @Override
    public void readKeys(KeySink sink) throws SourceException {
      for (int i = 0; i < keys; i++) {
        sink.line("k" + i);
      }
      try {
        boolean wasCancelled =
            endAfter.isZero()
                ? cancelled.await(20, TimeUnit.SECONDS)
                : cancelled.await(endAfter.toMillis(), TimeUnit.MILLISECONDS);
        if (wasCancelled) {
          throw new SourceException(Reasons.SOURCE_UNREADABLE, "connection dropped");
        }
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    }

    @Override
    public void cancel() {
      cancelled.countDown();
    }
  }
}
