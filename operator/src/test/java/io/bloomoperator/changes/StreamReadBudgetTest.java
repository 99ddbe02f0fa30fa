package io.bloomoperator.changes;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The operator-wide read heap and each namespace's share of it. */
class StreamReadBudgetTest {

  @Test
  void aReadTakesWhatIsFreeUpToWhatItWantsAndIsDeferredBelowItsLeast() {
    StreamReadBudget budget = new StreamReadBudget(100, 100);
    StreamReadBudget.Grant first = budget.take("a", 10, 70).orElseThrow();
    assertThat(first.bytes()).isEqualTo(70);
    StreamReadBudget.Grant second = budget.take("a", 10, 70).orElseThrow();
    assertThat(second.bytes()).as("what is left, fewer than it wants").isEqualTo(30);
    assertThat(budget.take("a", 10, 70)).as("less than its least is free").isEmpty();
    assertThat(budget.used()).isEqualTo(100);

    first.close();
    first.close(); // given back once only
    assertThat(budget.used()).isEqualTo(30);
    assertThat(budget.take("a", 10, 70))
        .get()
        .extracting(StreamReadBudget.Grant::bytes)
        .isEqualTo(70L);
    assertThat(budget.peak()).isEqualTo(100);
  }

  @Test
  void oneNamespaceCannotTakeMoreThanItsShare() {
    StreamReadBudget budget = new StreamReadBudget(100, 40);
    StreamReadBudget.Grant a1 = budget.take("a", 10, 30).orElseThrow();
    StreamReadBudget.Grant a2 = budget.take("a", 10, 30).orElseThrow();
    assertThat(a1.bytes() + a2.bytes()).isEqualTo(40);
    assertThat(budget.take("a", 10, 30)).as("a's share is spent").isEmpty();
    // Other namespaces still find the rest.
    assertThat(budget.take("b", 10, 30))
        .get()
        .extracting(StreamReadBudget.Grant::bytes)
        .isEqualTo(30L);
    assertThat(budget.take("c", 10, 40))
        .get()
        .extracting(StreamReadBudget.Grant::bytes)
        .isEqualTo(30L);
    assertThat(budget.take("d", 10, 40)).as("the budget is spent").isEmpty();
    a2.close();
    assertThat(budget.used()).isEqualTo(90);
    assertThat(budget.take("d", 10, 40))
        .as("what a gave back, no more")
        .get()
        .extracting(StreamReadBudget.Grant::bytes)
        .isEqualTo(10L);
    assertThat(budget.used()).isEqualTo(100);
  }

  @Test
  void whileAnotherNamespaceWaitsForBytesAReadTakesAFairPartNotAllThereIs() {
    long[] now = {0};
    StreamReadBudget budget = new StreamReadBudget(100, 100, () -> now[0]);
    StreamReadBudget.Grant a = budget.take("a", 10, 100).orElseThrow();
    assertThat(a.bytes()).as("alone: all it wants").isEqualTo(100);
    assertThat(budget.take("b", 10, 100)).isEmpty();
    a.close();
    now[0] += Duration.ofSeconds(1).toNanos();
    // b waited: a's next read leaves it half.
    StreamReadBudget.Grant again = budget.take("a", 10, 100).orElseThrow();
    assertThat(again.bytes()).isEqualTo(50);
    StreamReadBudget.Grant b = budget.take("b", 10, 100).orElseThrow();
    assertThat(b.bytes()).isEqualTo(50);
    assertThat(budget.take("c", 10, 100)).isEmpty();
    again.close();
    b.close();
    // Long after anyone waited: all it wants again.
    now[0] += StreamReadBudget.CONTENDING.toNanos() + 1;
    try (StreamReadBudget.Grant alone = budget.take("a", 10, 100).orElseThrow()) {
      assertThat(alone.bytes()).isEqualTo(100);
    }
  }

  @Test
  void concurrentReadsOfManyNamespacesNeverHoldMoreThanTheBudgetOrAShare() throws Exception {
    long total = 1000;
    long share = 300;
    StreamReadBudget budget = new StreamReadBudget(total, share);
    AtomicLong[] inNamespace = new AtomicLong[6];
    for (int i = 0; i < inNamespace.length; i++) {
      inNamespace[i] = new AtomicLong();
    }
    AtomicLong maxShare = new AtomicLong();
    AtomicLong granted = new AtomicLong();
    ExecutorService pool = Executors.newFixedThreadPool(12);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<?>> all = new ArrayList<>();
    for (int t = 0; t < 12; t++) {
      int namespace = t % inNamespace.length;
      all.add(
          pool.submit(
              () -> {
                go.await();
                for (int i = 0; i < 2000; i++) {
                  Optional<StreamReadBudget.Grant> grant =
                      budget.take("ns-" + namespace, 50, 50 + (i % 7) * 40);
                  if (grant.isEmpty()) {
                    continue;
                  }
                  try (StreamReadBudget.Grant held = grant.get()) {
                    long mine = inNamespace[namespace].addAndGet(held.bytes());
                    maxShare.accumulateAndGet(mine, Math::max);
                    granted.incrementAndGet();
                    Thread.yield();
                    inNamespace[namespace].addAndGet(-held.bytes());
                  }
                }
                return null;
              }));
    }
    go.countDown();
    for (Future<?> f : all) {
      f.get(60, TimeUnit.SECONDS);
    }
    pool.shutdown();
    assertThat(budget.peak()).isLessThanOrEqualTo(total).isGreaterThan(share);
    assertThat(maxShare.get()).isLessThanOrEqualTo(share);
    assertThat(budget.used()).isZero();
    assertThat(granted.get()).isPositive();
  }
}
