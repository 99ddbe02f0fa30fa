package io.bloomoperator.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.SnapshotVersions;
import org.junit.jupiter.api.Test;

/** Foreign numbers move numbering only a small step; numbering never leaves the range. */
class VersionNumberingTest {

  private static final long MAX = SnapshotVersions.MAX;
  private static final long TWO_E18 = 2_000_000_000_000_000_000L;

  @Test
  void aForeignVersionMovesNumberingOnlyWithinTheStepAboveTheOwnRecord() {
    assertThat(VersionNumbering.moves(7, 7 + VersionNumbering.FOREIGN_STEP)).isTrue();
    assertThat(VersionNumbering.moves(7, 8 + VersionNumbering.FOREIGN_STEP)).isFalse();
    assertThat(VersionNumbering.moves(0, VersionNumbering.FOREIGN_STEP)).as("no status").isTrue();
    assertThat(VersionNumbering.moves(0, 1 + VersionNumbering.FOREIGN_STEP)).isFalse();
    assertThat(VersionNumbering.moves(1, MAX)).as("the attack at 10^18-1").isFalse();
    assertThat(VersionNumbering.moves(1, TWO_E18)).as("the attack at 2*10^18").isFalse();
    assertThat(VersionNumbering.moves(MAX, MAX)).isTrue();
    assertThat(VersionNumbering.moves(MAX, MAX + 1)).as("never out of range").isFalse();
    assertThat(VersionNumbering.moves(Long.MAX_VALUE, TWO_E18)).isFalse();
    assertThat(VersionNumbering.moves(3, 0)).isFalse();
    assertThat(VersionNumbering.moves(3, -5)).isFalse();
  }

  @Test
  void theNextVersionIsInRangeOrRefused() throws Exception {
    assertThat(VersionNumbering.next(0)).isEqualTo(1);
    assertThat(VersionNumbering.next(41)).isEqualTo(42);
    assertThat(VersionNumbering.next(MAX - 1)).isEqualTo(MAX);
    for (long highest : new long[] {MAX, TWO_E18, Long.MAX_VALUE}) {
      assertThatThrownBy(() -> VersionNumbering.next(highest))
          .isInstanceOfSatisfying(
              PublishException.class,
              e -> {
                assertThat(e.reason()).isEqualTo(Reasons.VERSIONS_EXHAUSTED);
                assertThat(e.getMessage()).contains(Long.toString(MAX));
              });
    }
  }
}
