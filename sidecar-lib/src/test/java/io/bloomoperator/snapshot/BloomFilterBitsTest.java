package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class BloomFilterBitsTest {

  @Test
  void keyTypeMismatchThrowsInsteadOfAnswering() {
    BloomFilterBits strings = BloomFilterBits.create(KeyType.STRING, 1024, 3);
    BloomFilterBits longs = BloomFilterBits.create(KeyType.LONG, 1024, 3);
    assertThatThrownBy(() -> strings.mightContainLong(1)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("String keys");
    assertThatThrownBy(() -> strings.putLong(1)).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> longs.mightContainString("1")).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("Long keys");
    assertThatThrownBy(() -> longs.putString("1")).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> strings.mightContain(1L)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> longs.mightContain("1")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> longs.mightContain(1.0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> longs.mightContain(null)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void genericPutAndLookup() {
    BloomFilterBits strings = BloomFilterBits.create(KeyType.STRING, 4096, 5);
    assertThat(strings.put(new StringBuilder("alpha"))).isTrue();
    assertThat(strings.put("alpha")).isFalse();
    assertThat(strings.mightContain("alpha")).isTrue();
    assertThat(strings.mightContainString("alpha")).isTrue();
    assertThat(strings.mightContain("beta")).isFalse();

    BloomFilterBits longs = BloomFilterBits.create(KeyType.LONG, 4096, 5);
    longs.put(42);
    assertThat(longs.mightContainLong(42)).isTrue();
    assertThat(longs.mightContain(42L)).isTrue();
    assertThat(longs.mightContain(43L)).isFalse();
    assertThat(longs.bitCount()).isBetween(1L, 5L);
  }

  @Test
  void shapeAndEquality() {
    BloomFilterBits a = BloomFilterBits.create(KeyType.LONG, 100, 4);
    assertThat(a.numBits()).isEqualTo(128);
    assertThat(a.numLongs()).isEqualTo(2);
    assertThat(a.numHashFunctions()).isEqualTo(4);
    assertThat(a.wordsView().isReadOnly()).isTrue();
    assertThat(a.wordsView().remaining()).isEqualTo(2);
    BloomFilterBits b = BloomFilterBits.create(KeyType.LONG, 128, 4);
    assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
    a.putLong(7);
    assertThat(a).isNotEqualTo(b);
    b.putLong(7);
    assertThat(a).isEqualTo(b);
    assertThat(a).isNotEqualTo(BloomFilterBits.create(KeyType.STRING, 128, 4));
    assertThat(a.currentFpp()).isBetween(0.0, 1.0);
  }

  @Test
  void rejectsImpossibleShapes() {
    assertThatThrownBy(() -> BloomFilterBits.create(KeyType.LONG, 0, 1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> BloomFilterBits.create(KeyType.LONG, 64, 0))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> BloomFilterBits.create(KeyType.LONG, 64, 256))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> BloomFilterBits.create(KeyType.LONG, BloomFilterSizing.MAX_BITS + 1, 1))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void keyTypeCrdSpelling() {
    assertThat(KeyType.fromCrdName("String")).isEqualTo(KeyType.STRING);
    assertThat(KeyType.fromCrdName("Long")).isEqualTo(KeyType.LONG);
    assertThat(KeyType.STRING.crdName()).isEqualTo("String");
    assertThatThrownBy(() -> KeyType.fromCrdName("LONG")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("\"String\", \"Long\"");
    assertThatThrownBy(() -> KeyType.fromCrdName(null)).isInstanceOf(IllegalArgumentException.class);
  }
}
