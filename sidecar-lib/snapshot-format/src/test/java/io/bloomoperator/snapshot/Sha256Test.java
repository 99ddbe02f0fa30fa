package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** What counts as a digest in a manifest: 64 ASCII hex digits, either case, nothing else. */
class Sha256Test {

  @Test
  void onlySixtyFourHexDigitsAreADigest() {
    assertThat(Sha256.isHex64("0123456789abcdef".repeat(4))).isTrue();
    assertThat(Sha256.isHex64("0123456789ABCDEF".repeat(4))).isTrue();
    assertThat(Sha256.isHex64("a".repeat(63))).isFalse();
    assertThat(Sha256.isHex64("a".repeat(65))).isFalse();
    assertThat(Sha256.isHex64(null)).isFalse();
    for (char c : new char[] {'g', 'G', '/', ':', '@', '`', '٣', ' '}) {
      assertThat(Sha256.isHex64(c + "a".repeat(63))).as("'%s'", c).isFalse();
      assertThat(Sha256.isHex64("a".repeat(63) + c)).as("'%s' last", c).isFalse();
    }
  }
}
