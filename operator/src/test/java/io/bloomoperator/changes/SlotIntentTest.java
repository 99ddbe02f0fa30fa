package io.bloomoperator.changes;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The record of a slot the operator is about to create vouches for it only within its window: not
 * when stale, from the future, of another slot, malformed or oversized, or outside the directory.
 */
class SlotIntentTest {

  private static final Instant NOW = Instant.parse("2026-12-03T20:00:00Z");
  private static final String SLOT = "7312345678901234567/shop/slot_products";

  @Test
  void aRecordVouchesForItsSlotWithinItsWindowOnly(@TempDir Path dir) {
    SlotIntent record = SlotIntent.of(dir, "f7c1e2d4-0000-4000-8000-000000000001");
    assertThat(record.read(NOW)).isEmpty();
    record.write(SLOT, NOW);
    assertThat(record.read(NOW)).contains(SLOT);
    assertThat(record.read(NOW.plus(SlotIntent.MAX_AGE))).contains(SLOT);
    assertThat(record.read(NOW.plus(SlotIntent.MAX_AGE).plusMillis(1))).as("stale").isEmpty();
    assertThat(record.read(NOW.minusSeconds(1))).as("written in the future").isEmpty();
    assertThat(SlotIntent.of(dir, "another-uid").read(NOW)).as("per filter").isEmpty();
  }

  @Test
  void aRecordIsClearedOnlyForItsOwnSlot(@TempDir Path dir) {
    SlotIntent record = SlotIntent.of(dir, "uid-1");
    record.write(SLOT, Instant.now());
    record.clear("7312345678901234567/shop/slot_former");
    assertThat(record.read(Instant.now())).as("a former slot's drop keeps it").contains(SLOT);
    record.clear(SLOT);
    assertThat(record.read(Instant.now())).isEmpty();
  }

  @Test
  void malformedOversizedOrMisplacedRecordsVouchForNothing(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("uid-2.slot");
    SlotIntent record = SlotIntent.of(dir, "uid-2");
    Files.writeString(file, SLOT, StandardCharsets.UTF_8); // no time: an older format or a torn one
    assertThat(record.read(NOW)).isEmpty();
    Files.writeString(file, SLOT + "\nnot-a-time", StandardCharsets.UTF_8);
    assertThat(record.read(NOW)).isEmpty();
    Files.writeString(file, "x".repeat(2000) + "\n" + NOW.toEpochMilli(), StandardCharsets.UTF_8);
    assertThat(record.read(NOW)).isEmpty();
    assertThat(SlotIntent.of(dir, "../escape")).isSameAs(SlotIntent.NONE);
    assertThat(SlotIntent.of(null, "uid-3")).isSameAs(SlotIntent.NONE);
    SlotIntent.NONE.write(SLOT, NOW);
    assertThat(SlotIntent.NONE.read(NOW)).isEmpty();
    assertThat(Duration.ofMinutes(10)).isEqualTo(SlotIntent.MAX_AGE);
  }
}
