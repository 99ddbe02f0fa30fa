package io.bloomoperator.changes;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What a read goes through before it reaches the stream: backoff, read place, read heap. */
class StreamReadsTest {

  private static final Instant NOW = Instant.parse("2026-12-02T22:00:00Z");
  private static final Duration EVERY = Duration.ofSeconds(2);

  private static StreamLimits limits(int readsPerNamespace, long readBytes, long namespaceBytes) {
    return StreamLimits.defaults().withReads(readsPerNamespace, readBytes, namespaceBytes);
  }

  private static ChangeStream.Batch batch() {
    return new ChangeStream.Batch(List.of("k"), 0, 0, StreamPosition.start(), 0, null);
  }

  @Test
  void aNamespaceHasAtMostItsReadsUnderWayOthersAreNotHeldUp() throws Exception {
    StreamReads reads = new StreamReads(limits(1, 64L << 20, 32L << 20));
    CountDownLatch reading = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    CompletableFuture<StreamRead<ChangeStream.Batch>> slow =
        CompletableFuture.supplyAsync(
            () ->
                reads.ask(
                    "a1",
                    "a",
                    EVERY,
                    NOW,
                    true,
                    bytes -> {
                      reading.countDown();
                      try {
                        release.await();
                      } catch (InterruptedException e) {
                        throw new StreamException(StreamException.Kind.UNAVAILABLE, "interrupted");
                      }
                      return batch();
                    }));
    assertThat(reading.await(10, TimeUnit.SECONDS)).isTrue();
    StreamRead<ChangeStream.Batch> second = reads.ask("a2", "a", EVERY, NOW, true, b -> batch());
    assertThat(second)
        .isEqualTo(new StreamRead.Deferred<ChangeStream.Batch>(StreamRead.Deferral.READS, null));
    try (StreamRead<ChangeStream.Batch> other =
        reads.ask("b1", "b", EVERY, NOW, true, b -> batch())) {
      assertThat(other).isInstanceOf(StreamRead.Done.class);
    }
    release.countDown();
    try (StreamRead<ChangeStream.Batch> done = slow.get(10, TimeUnit.SECONDS)) {
      assertThat(done).isInstanceOf(StreamRead.Done.class);
      // The place is free once the read returned, though its keys are not published yet.
      try (StreamRead<ChangeStream.Batch> next =
          reads.ask("a2", "a", EVERY, NOW, true, b -> batch())) {
        assertThat(next).isInstanceOf(StreamRead.Done.class);
      }
    }
  }

  @Test
  void aReadCollectsWhatItReservedAndHoldsItUntilClosed() throws Exception {
    StreamLimits small =
        limits(
            4,
            2 * StreamLimits.defaults().minReadBytes(),
            2 * StreamLimits.defaults().minReadBytes());
    StreamReads reads = new StreamReads(small);
    long[] asked = new long[1];
    StreamRead<ChangeStream.Batch> first =
        reads.ask(
            "a1",
            "a",
            EVERY,
            NOW,
            true,
            bytes -> {
              asked[0] = bytes;
              return batch();
            });
    assertThat(first).isInstanceOf(StreamRead.Done.class);
    assertThat(asked[0])
        .as("the whole budget less the read's overhead: fewer keys than a full read")
        .isEqualTo(small.readBytes() - small.readOverhead())
        .isLessThan(small.maxReadBytes());
    assertThat(reads.budget().used()).isEqualTo(small.readBytes());
    assertThat(reads.ask("a2", "a", EVERY, NOW, true, b -> batch()))
        .isEqualTo(new StreamRead.Deferred<ChangeStream.Batch>(StreamRead.Deferral.BYTES, null));
    first.close();
    assertThat(reads.budget().used()).isZero();
  }

  @Test
  void aFailedStreamIsLeftAloneUntilItsBackoffEndsAndAPositionLostIsNot() {
    StreamReads reads = new StreamReads(StreamLimits.defaults());
    StreamRead<ChangeStream.Batch> failed =
        reads.ask(
            "a1",
            "a",
            EVERY,
            NOW,
            true,
            b -> {
              throw new StreamException(StreamException.Kind.UNAVAILABLE, "down");
            });
    assertThat(failed).isInstanceOf(StreamRead.Failed.class);
    StreamRead.Failed<?> failure = (StreamRead.Failed<?>) failed;
    assertThat(failure.news()).isTrue();
    assertThat(failure.message()).startsWith("down; read again after ").endsWith("(1 failure)");
    assertThat(reads.budget().used()).as("given back at once").isZero();
    int[] calls = new int[1];
    StreamRead<ChangeStream.Batch> waiting =
        reads.ask(
            "a1",
            "a",
            EVERY,
            NOW.plusMillis(500),
            true,
            b -> {
              calls[0]++;
              return batch();
            });
    assertThat(waiting).isInstanceOf(StreamRead.Deferred.class);
    assertThat(((StreamRead.Deferred<?>) waiting).reason()).isEqualTo(StreamRead.Deferral.BACKOFF);
    assertThat(calls[0]).as("the stream is not asked").isZero();

    try (StreamRead<ChangeStream.Batch> lost =
        reads.ask(
            "b1",
            "b",
            EVERY,
            NOW,
            true,
            b -> {
              throw new StreamException(StreamException.Kind.POSITION_LOST, "gone");
            })) {
      assertThat(((StreamRead.Failed<?>) lost).backoff()).isNull();
    }
    assertThat(reads.backoff().waiting("b1", NOW)).as("a full build follows at once").isEmpty();
  }

  @Test
  void aStreamWaitingForItsWriteBudgetIsNotReadUntilThenButItsPositionProbeIs() {
    StreamReads reads = new StreamReads(StreamLimits.defaults());
    reads.backoff().waitForBudget("a1", NOW.plusSeconds(60));
    int[] calls = new int[1];
    StreamRead<ChangeStream.Batch> waiting =
        reads.ask(
            "a1",
            "a",
            EVERY,
            NOW.plusSeconds(59),
            true,
            b -> {
              calls[0]++;
              return batch();
            });
    assertThat(((StreamRead.Deferred<?>) waiting).reason())
        .isEqualTo(StreamRead.Deferral.WRITE_BUDGET);
    assertThat(StreamRead.Deferral.WRITE_BUDGET.tag()).isEqualTo("write_budget");
    assertThat(calls[0]).as("nothing read that could not be published").isZero();
    assertThat(reads.budget().used()).isZero();
    // A probe of the start position collects nothing and leads to a full build: not held back.
    try (StreamRead<StreamPosition> probe =
        reads.ask("a1", "a", EVERY, NOW, false, b -> StreamPosition.parse("0:5"))) {
      assertThat(probe).isInstanceOf(StreamRead.Done.class);
    }
    assertThat(reads.backoff().waiting("a1", NOW)).as("no backoff: not a failure").isEmpty();
    try (StreamRead<ChangeStream.Batch> after =
        reads.ask(
            "a1",
            "a",
            EVERY,
            NOW.plusSeconds(60),
            true,
            b -> {
              calls[0]++;
              return batch();
            })) {
      assertThat(after).isInstanceOf(StreamRead.Done.class);
    }
    assertThat(calls[0]).isEqualTo(1);
    reads.backoff().waitForBudget("a1", NOW.plusSeconds(60));
    reads.backoff().forget("a1");
    assertThat(reads.backoff().budgetWait("a1", NOW)).as("forgotten with the stream").isEmpty();
  }
}
