package io.bloomoperator.changes;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.snapshot.BitPositions;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fair share of the counting budget: two namespaces at their bound fill the total; a third is
 * refused for room and waits; each of the two gives its room back at its next full build (its file
 * deleted, the refusal saying why without naming anyone), and the third gets its share at its own
 * next one. Nobody within its share is ever asked to give back.
 */
class CountingRoomTest {

  @TempDir Path dir;

  private static final long BIG = 400;
  private static final long SMALL = 100;

  @Test
  void twoNamespacesFillingTheTotalGiveRoomBackToAThirdAtTheirNextFullBuilds() {
    CountingRoom room = new CountingRoom(2 * BIG + 50, BIG);
    assertThat(room.take("a", "ns-a", BIG)).isNull();
    assertThat(room.take("b", "ns-b", BIG)).isNull();

    String refused = room.take("c", "ns-c", SMALL);
    assertThat(refused).contains("BLOOM_STREAM_COUNTING_BYTES=850", "fair share");
    assertThat(room.waits("ns-c")).isTrue();
    assertThat(room.fairShare("ns-a")).isEqualTo(850 / 3);

    // ns-a's next full build: its old shadow goes first, then its new one is over its share.
    room.release("a");
    assertThat(room.take("a", "ns-a", BIG))
        .contains("more than its fair share of 283 of BLOOM_STREAM_COUNTING_BYTES=850")
        .doesNotContain("ns-c");
    // What is free (450) already holds the waiting shadow: ns-b keeps its own at its build.
    room.release("b");
    assertThat(room.take("b", "ns-b", BIG)).isNull();

    assertThat(room.take("c", "ns-c", SMALL)).isNull();
    assertThat(room.waits("ns-c")).isFalse();
    // Nobody waits any more: ns-a gets its shadow back beside the others as long as it fits.
    assertThat(room.take("a", "ns-a", BIG)).contains("BLOOM_STREAM_COUNTING_BYTES=850");
    assertThat(room.bytes()).isEqualTo(BIG + SMALL);
  }

  @Test
  void aNamespaceWithinItsShareKeepsItWhileAnotherWaits() {
    CountingRoom room = new CountingRoom(900, 600);
    assertThat(room.take("a", "ns-a", 250)).isNull();
    assertThat(room.take("b", "ns-b", 600)).isNull();
    assertThat(room.take("c", "ns-c", 200)).isNotNull(); // waits; fair share 300
    room.release("a");
    assertThat(room.take("a", "ns-a", 250)).as("within its share of 300").isNull();
    room.release("b");
    assertThat(room.take("b", "ns-b", 600)).contains("fair share of 300");
    assertThat(room.take("c", "ns-c", 200)).isNull();
  }

  @Test
  void aWaitingFilterThatStopsCountingNoLongerTakesAShareFromTheOthers() {
    CountingRoom room = new CountingRoom(800, 400);
    assertThat(room.take("a", "ns-a", 400)).isNull();
    assertThat(room.take("b", "ns-b", 400)).isNull();
    assertThat(room.take("c", "ns-c", 100)).isNotNull();
    room.gone("c");
    room.release("a");
    assertThat(room.take("a", "ns-a", 400)).isNull();
    assertThat(room.fairShare("ns-a")).isEqualTo(400);
  }

  @Test
  void theNamespaceBoundStillComesFirstAndARefusalByItIsNoWait() {
    CountingRoom room = new CountingRoom(800, 400);
    assertThat(room.take("a", "ns-a", 400)).isNull();
    assertThat(room.take("b", "ns-b", 400)).isNull();
    assertThat(room.take("c", "ns-c", 500)).contains("BLOOM_STREAM_NAMESPACE_COUNTING_BYTES");
    assertThat(room.waits("ns-c")).isFalse();
  }

  /** The same through the shadows: the refused build's files are gone, its room is free. */
  @Test
  void theShadowsGiveTheFilesOfANamespaceOverItsShareBack() throws Exception {
    BitPositions positions = BitPositions.of(FilterFormat.GUAVA, 64L * 1024, 7);
    long big = CountingShadow.bytesFor(positions.numBits(), 5_000);
    long small = CountingShadow.bytesFor(positions.numBits(), 10);
    try (CountingShadows shadows = new CountingShadows(dir, 2 * big + small / 2, big)) {
      assertThat(shadows.reserve("a", "ns-a", positions, KeyType.STRING, 5_000).shadow())
          .isNotNull();
      assertThat(shadows.reserve("b", "ns-b", positions, KeyType.STRING, 5_000).shadow())
          .isNotNull();
      CountingShadows.Reserved c = shadows.reserve("c", "ns-c", positions, KeyType.STRING, 10);
      assertThat(c.shadow()).isNull();
      assertThat(c.refusal()).contains("BLOOM_STREAM_COUNTING_BYTES=");

      CountingShadows.Reserved a = shadows.reserve("a", "ns-a", positions, KeyType.STRING, 5_000);
      assertThat(a.shadow()).isNull();
      assertThat(a.refusal()).contains("fair share");
      assertThat(Files.exists(dir.resolve("a.counts"))).as("a's room given back").isFalse();
      assertThat(shadows.of("a")).isNull();

      assertThat(shadows.reserve("c", "ns-c", positions, KeyType.STRING, 10).shadow()).isNotNull();
      assertThat(shadows.bytes()).isEqualTo(big + small);
    }
  }
}
