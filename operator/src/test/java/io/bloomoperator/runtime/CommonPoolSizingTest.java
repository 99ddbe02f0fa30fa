package io.bloomoperator.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class CommonPoolSizingTest {

  @Test
  void raisesTheDefaultOnTwoCpusOrFewer() {
    assertThat(CommonPoolSizing.parallelismToSet(null, 1)).isEqualTo(OptionalInt.of(2));
    assertThat(CommonPoolSizing.parallelismToSet(null, 2)).isEqualTo(OptionalInt.of(2));
  }

  @Test
  void leavesALargeEnoughDefaultAlone() {
    assertThat(CommonPoolSizing.parallelismToSet(null, 3)).isEmpty();
    assertThat(CommonPoolSizing.parallelismToSet(null, 16)).isEmpty();
  }

  @Test
  void neverOverridesTheUsersChoice() {
    assertThat(CommonPoolSizing.parallelismToSet("1", 2)).isEmpty();
    assertThat(CommonPoolSizing.parallelismToSet("8", 1)).isEmpty();
  }
}
