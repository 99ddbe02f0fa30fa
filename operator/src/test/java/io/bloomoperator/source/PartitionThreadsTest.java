package io.bloomoperator.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * A partitioned read's connection share is held until its reading threads have really ended: a
 * thread that outlives the join (a driver call that ignores the abort) keeps it, so the namespace
 * cannot open connections beyond its share beside it; the share goes back when that thread ends.
 */
class PartitionThreadsTest {

  @Test
  void aThreadThatOutlivesTheJoinKeepsTheShareUntilItHasEnded() {
    JdbcConnectionShares shares = new JdbcConnectionShares(4, 2);
    JdbcConnectionShares.Held held = shares.take("ns", 2);
    assertThat(held.count()).isEqualTo(2);
    CountDownLatch release = new CountDownLatch(1);
    PartitionThreads threads = new PartitionThreads(held, 3, 50);
    threads.start(() -> {}, "quick");
    threads.start(
        () -> {
          boolean done = false;
          while (!done) {
            try {
              done = release.await(1, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              // a stuck driver call ignores interrupts too
            }
          }
        },
        "stuck");
    // The third was never started (as when starting it failed): it counts as ended.

    threads.join();
    assertThat(threads.running()).as("the stuck thread outlived the join").isEqualTo(1);
    assertThat(shares.heldBy("ns")).as("its share is still held").isEqualTo(2);
    assertThat(shares.take("ns", 2).count()).as("no connection beyond the share").isZero();

    release.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> shares.inUse() == 0);
    assertThat(threads.running()).isZero();
    assertThat(shares.take("ns", 2).count()).isEqualTo(2);
  }

  @Test
  void threadsThatEndInTimeGiveTheShareBackBeforeTheJoinReturns() {
    JdbcConnectionShares shares = new JdbcConnectionShares(4, 2);
    PartitionThreads threads = new PartitionThreads(shares.take("ns", 2), 3, 10_000);
    for (int i = 0; i < 3; i++) {
      threads.start(() -> {}, "t" + i);
    }
    threads.join();
    assertThat(shares.inUse()).isZero();
  }
}
