package io.bloomoperator.build;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The fairness rules of {@link BuildSlots}, without a cluster. */
@Timeout(30)
class BuildSlotsTest {

  private final ExecutorService threads = Executors.newCachedThreadPool();

  @AfterEach
  void stop() {
    threads.shutdownNow();
  }

  @Test
  void oneNamespaceNeverHoldsEverySlot() throws Exception {
    BuildSlots slots = new BuildSlots(2);
    assertThat(slots.perNamespace()).isEqualTo(1);
    BuildSlots.Slot a1 = slots.slot("a");
    a1.reserve();
    CompletableFuture<BuildSlots.Slot> a2 = take(slots, "a");
    BuildSlots.Slot b1 = slots.slot("b");
    b1.reserve(); // the free slot is not a's to take
    assertThat(slots.available()).isZero();
    Thread.sleep(200);
    assertThat(a2).isNotDone();
    a1.close();
    assertThat(a2.get().held()).isTrue();
    a2.get().close();
    b1.close();
    assertThat(slots.available()).isEqualTo(2);
  }

  @Test
  void aFreeSlotGoesToTheNamespaceServedLongestAgo() throws Exception {
    BuildSlots slots = new BuildSlots(2);
    BuildSlots.Slot a1 = slots.slot("a");
    BuildSlots.Slot b1 = slots.slot("b");
    a1.reserve();
    b1.reserve();
    CompletableFuture<BuildSlots.Slot> a2 = take(slots, "a");
    await().until(() -> waiting(slots) == 1);
    CompletableFuture<BuildSlots.Slot> c1 = take(slots, "c"); // arrives after a2
    await().until(() -> waiting(slots) == 2);
    a1.close(); // a and c hold none now; c has never been served
    assertThat(c1.get().held()).isTrue();
    assertThat(a2).isNotDone();
    b1.close();
    assertThat(a2.get().held()).isTrue();
  }

  @Test
  void aNamespaceWhoseBuildStalledWaitsBehindOneServedMoreRecently() throws Exception {
    // Fault 7's hostile phase: builds of two namespaces stall until the stall bound stops them;
    // the honest namespace's builds take milliseconds, so it was always served more recently than
    // a staller, and every freed slot went to the staller's next filter.
    BuildSlots slots = new BuildSlots(2);
    BuildSlots.Slot a = slots.slot("hostile-a");
    a.reserve(); // stalls from here on
    BuildSlots.Slot honest = slots.slot("honest");
    honest.reserve(); // served after hostile-a
    honest.close();
    BuildSlots.Slot b = slots.slot("hostile-b");
    b.reserve();
    CompletableFuture<BuildSlots.Slot> aAgain = take(slots, "hostile-a");
    await().until(() -> waiting(slots) == 1);
    CompletableFuture<BuildSlots.Slot> honestAgain = take(slots, "honest"); // arrives later
    await().until(() -> waiting(slots) == 2);
    a.stalled(); // the stall bound stops it
    a.close();
    assertThat(honestAgain.get().held()).isTrue();
    assertThat(aAgain).isNotDone();
    honestAgain.get().close();
    assertThat(aAgain.get().held()).as("no build waits forever").isTrue();
    aAgain.get().close();
    b.close();
  }

  @Test
  void withOneSlotEveryNamespaceTakesItInTurn() throws Exception {
    BuildSlots slots = new BuildSlots(1);
    assertThat(slots.perNamespace()).isEqualTo(1);
    BuildSlots.Slot a1 = slots.slot("a");
    a1.reserve();
    CompletableFuture<BuildSlots.Slot> b1 = take(slots, "b");
    a1.close();
    b1.get().close();
    assertThat(slots.available()).isEqualTo(1);
  }

  private CompletableFuture<BuildSlots.Slot> take(BuildSlots slots, String namespace) {
    return CompletableFuture.supplyAsync(
        () -> {
          BuildSlots.Slot slot = slots.slot(namespace);
          try {
            slot.reserve();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
          }
          return slot;
        },
        threads);
  }

  private static int waiting(BuildSlots slots) {
    return slots.waiting();
  }
}
