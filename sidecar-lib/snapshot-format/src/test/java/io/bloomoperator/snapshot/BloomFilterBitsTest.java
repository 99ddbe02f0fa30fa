package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class BloomFilterBitsTest {

  @Test
  void keyTypeMismatchThrowsInsteadOfAnswering() {
    BloomFilterBits.Builder stringBuilder = BloomFilterBits.builder(KeyType.STRING, 1024, 3);
    BloomFilterBits.Builder longBuilder = BloomFilterBits.builder(KeyType.LONG, 1024, 3);
    assertThatThrownBy(() -> stringBuilder.putLong(1)).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> longBuilder.putString("1")).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> longBuilder.put(1.0)).isInstanceOf(IllegalArgumentException.class);
    BloomFilterBits strings = stringBuilder.build();
    BloomFilterBits longs = longBuilder.build();
    assertThatThrownBy(() -> strings.mightContainLong(1))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("String keys");
    assertThatThrownBy(() -> longs.mightContainString("1"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("Long keys");
    assertThatThrownBy(() -> strings.mightContain(1L)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> longs.mightContain("1")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> longs.mightContain(1.0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> longs.mightContain(null)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void genericPutAndLookup() {
    BloomFilterBits.Builder stringBuilder = BloomFilterBits.builder(KeyType.STRING, 4096, 5);
    assertThat(stringBuilder.put(new StringBuilder("alpha"))).isTrue();
    assertThat(stringBuilder.put("alpha")).isFalse();
    BloomFilterBits strings = stringBuilder.build();
    assertThat(strings.mightContain("alpha")).isTrue();
    assertThat(strings.mightContainString("alpha")).isTrue();
    assertThat(strings.mightContain("beta")).isFalse();

    BloomFilterBits.Builder longBuilder = BloomFilterBits.builder(KeyType.LONG, 4096, 5);
    longBuilder.put(42);
    BloomFilterBits longs = longBuilder.build();
    assertThat(longs.mightContainLong(42)).isTrue();
    assertThat(longs.mightContain(42L)).isTrue();
    assertThat(longs.mightContain(43L)).isFalse();
    assertThat(longs.bitCount()).isBetween(1L, 5L);
  }

  @Test
  void builtFilterCanNoLongerChange() {
    BloomFilterBits.Builder builder = BloomFilterBits.builder(KeyType.LONG, 4096, 5);
    builder.putLong(1);
    BloomFilterBits built = builder.build();
    assertThatThrownBy(() -> builder.putLong(2))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("already built");
    assertThatThrownBy(() -> builder.put(2L)).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(builder::build).isInstanceOf(IllegalStateException.class);
    assertThat(built.mightContainLong(2)).isFalse();
    assertThat(built.mightContainLong(1)).isTrue();
  }

  @Test
  void shapeAndEquality() {
    BloomFilterBits.Builder builder = BloomFilterBits.builder(KeyType.LONG, 100, 4);
    assertThat(builder.numBits()).isEqualTo(128);
    assertThat(builder.numHashFunctions()).isEqualTo(4);
    assertThat(builder.keyType()).isEqualTo(KeyType.LONG);
    BloomFilterBits a = builder.build();
    assertThat(a.numBits()).isEqualTo(128);
    assertThat(a.numLongs()).isEqualTo(2);
    assertThat(a.numHashFunctions()).isEqualTo(4);
    BloomFilterBits b = BloomFilterBits.builder(KeyType.LONG, 128, 4).build();
    assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
    BloomFilterBits.Builder withSeven = BloomFilterBits.builder(KeyType.LONG, 128, 4);
    withSeven.putLong(7);
    BloomFilterBits c = withSeven.build();
    assertThat(c).isNotEqualTo(a);
    BloomFilterBits.Builder alsoSeven = BloomFilterBits.builder(KeyType.LONG, 128, 4);
    alsoSeven.putLong(7);
    assertThat(alsoSeven.build()).isEqualTo(c);
    assertThat(a).isNotEqualTo(BloomFilterBits.builder(KeyType.STRING, 128, 4).build());
    assertThat(c.currentFpp()).isBetween(0.0, 1.0);
  }

  @Test
  void rejectsImpossibleShapes() {
    assertThatThrownBy(() -> BloomFilterBits.builder(KeyType.LONG, 0, 1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> BloomFilterBits.builder(KeyType.LONG, 64, 0))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> BloomFilterBits.builder(KeyType.LONG, 64, 256))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(
            () -> BloomFilterBits.builder(KeyType.LONG, BloomFilterSizing.MAX_BITS + 1, 1))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void keyTypeCrdSpelling() {
    assertThat(KeyType.fromCrdName("String")).isEqualTo(KeyType.STRING);
    assertThat(KeyType.fromCrdName("Long")).isEqualTo(KeyType.LONG);
    assertThat(KeyType.STRING.crdName()).isEqualTo("String");
    assertThatThrownBy(() -> KeyType.fromCrdName("LONG"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("\"String\", \"Long\"");
    assertThatThrownBy(() -> KeyType.fromCrdName(null))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
