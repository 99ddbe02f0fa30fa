package io.bloomoperator.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.api.Reasons;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class StoreBudgetTest {

  private static final long MAX = 100;

  /**
   * Audit L2: two publishes of one namespace check the budget at once. Each lists what the
   * namespace's objects hold (neither has uploaded yet) and would fit alone; together they do not.
   * Exactly one may go ahead, and once it closed its reservation (its objects are listed now) the
   * budget counts them.
   */
  @Test
  void twoConcurrentPublishesOfOneNamespaceCannotBothTakeTheLastRoom() throws Exception {
    AtomicLong stored = new AtomicLong(10);
    CountDownLatch bothListing = new CountDownLatch(2);
    StoreBudget.StoredBytes listing =
        () -> {
          bothListing.countDown();
          try {
            // A store's listing takes a while; the other publish checks meanwhile.
            bothListing.await(300, TimeUnit.MILLISECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return stored.get();
        };
    StoreReservations reservations = new StoreReservations();
    WriteBudget uploads = StoreBudget.uploadBudget(1 << 20);
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      List<Future<StoreReservations.Reservation>> publishes = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        publishes.add(
            pool.submit(
                () -> new StoreBudget("s", "ns", MAX, listing, uploads, reservations).reserve(60)));
      }
      int refused = 0;
      StoreReservations.Reservation granted = null;
      for (var publish : publishes) {
        try {
          granted = publish.get(5, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
          assertThat(e.getCause())
              .isInstanceOfSatisfying(
                  PublishException.class,
                  p -> assertThat(p.reason()).isEqualTo(Reasons.STORE_BUDGET_EXCEEDED));
          refused++;
        }
      }
      assertThat(refused).as("publishes refused").isEqualTo(1);
      assertThat(granted).isNotNull();

      // The granted upload completes: its objects are listed, its reservation released.
      stored.addAndGet(60);
      granted.close();
      granted.close(); // once only
      StoreBudget next = new StoreBudget("s", "ns", MAX, stored::get, uploads, reservations);
      assertThatThrownBy(() -> next.reserve(60)).isInstanceOf(PublishException.class);
      next.reserve(30).close();
      // Another namespace has its own room.
      new StoreBudget("s", "other", MAX, () -> 0, uploads, reservations).reserve(60).close();
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void uploadsOverTheHourlyBudgetAreRefusedUntilTheWindowMoves() throws Exception {
    WriteBudget uploads = StoreBudget.uploadBudget(1000);
    StoreBudget budget = new StoreBudget("s", "ns", MAX, () -> 0, uploads, new StoreReservations());
    Instant now = Instant.parse("2026-12-02T04:00:00Z");
    budget.chargeUpload("f", 800, now);
    assertThat(budget.uploadsExhausted("f", now)).isEmpty();
    assertThatThrownBy(() -> budget.chargeUpload("g", 300, now))
        .isInstanceOfSatisfying(
            PublishException.class,
            p -> {
              assertThat(p.reason()).isEqualTo(Reasons.STORE_UPLOAD_BUDGET_EXCEEDED);
              assertThat(p.getMessage())
                  .contains("BLOOM_STORE_NAMESPACE_UPLOAD_BYTES_PER_HOUR")
                  .contains("the next publish is possible at");
              // When it fits, for a build's retry and a stream's wait: the first minute's
              // uploads leave the hour's window.
              assertThat(((WriteBudgetExceeded) p).retryAfter(now))
                  .hasValueSatisfying(
                      left ->
                          assertThat(left)
                              .isPositive()
                              .isLessThanOrEqualTo(java.time.Duration.ofMinutes(61)));
            });
    budget.chargeUpload("g", 300, now.plusSeconds(3601));
  }
}
