package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.OptionalLong;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The one version range, at both ends: the last accepted value and the first refused one. */
class SnapshotVersionsTest {

  static final long MAX = 999_999_999_999_999_999L;
  static final long TWO_E18 = 2_000_000_000_000_000_000L;

  @Test
  void theRangeIsOneTo18Digits() {
    assertThat(SnapshotVersions.MIN).isEqualTo(1);
    assertThat(SnapshotVersions.MAX).isEqualTo(MAX);
    assertThat(Long.toString(SnapshotVersions.MAX)).hasSize(18);
    assertThat(SnapshotVersions.valid(1)).isTrue();
    assertThat(SnapshotVersions.valid(MAX)).isTrue();
    assertThat(SnapshotVersions.valid(0)).isFalse();
    assertThat(SnapshotVersions.valid(-1)).isFalse();
    assertThat(SnapshotVersions.valid(MAX + 1)).isFalse();
    assertThat(SnapshotVersions.valid(TWO_E18)).isFalse();
    assertThat(SnapshotVersions.valid(Long.MAX_VALUE)).isFalse();
  }

  @Test
  void parseAcceptsExactlyWhatToStringWritesForTheRange() {
    assertThat(SnapshotVersions.parse("1")).isEqualTo(OptionalLong.of(1));
    assertThat(SnapshotVersions.parse(Long.toString(MAX))).isEqualTo(OptionalLong.of(MAX));
    for (String refused :
        new String[] {
          null,
          "",
          "0",
          "-1",
          "+1",
          "01",
          " 1",
          "1 ",
          "1e3",
          "١",
          Long.toString(MAX + 1),
          Long.toString(TWO_E18),
          Long.toString(Long.MAX_VALUE),
          "9".repeat(40)
        }) {
      assertThat(SnapshotVersions.parse(refused)).as("'%s'", refused).isEmpty();
    }
  }

  @Test
  void theRegexFragmentMatchesTheSameRange() {
    Pattern p = Pattern.compile("v(" + SnapshotVersions.REGEX + ")");
    assertThat(p.matcher("v" + MAX).matches()).isTrue();
    assertThat(p.matcher("v" + (MAX + 1)).matches()).isFalse();
    assertThat(p.matcher("v" + TWO_E18).matches()).isFalse();
    assertThat(p.matcher("v0").matches()).isFalse();
  }
}
