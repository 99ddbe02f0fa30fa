package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class StoreObjectKeysTest {

  private static final String SHA = "9c1e".repeat(16);

  @Test
  void aChunkLivesInItsFiltersDirectoryNamedByNameAndDigest() {
    Manifest.ChunkRef ref = new Manifest.ChunkRef("skus-bloom-v17-3", 10, SHA.toUpperCase());
    String key = StoreObjectKeys.key("bloom/prod", "shop", "skus", ref);

    assertThat(key).isEqualTo("bloom/prod/shop/skus/skus-bloom-v17-3." + SHA);
    assertThat(StoreObjectKeys.parse("bloom/prod/shop/skus/", key))
        .contains(new StoreObjectKeys.ChunkKey("skus-bloom-v17-3", SHA));
    assertThat(StoreObjectKeys.key("", "shop", "skus", ref)).startsWith("shop/skus/");
  }

  @ParameterizedTest
  @ValueSource(strings = {"../other-bloom-v1-0", "a/b", "", "-x", "x..y", "UPPER", "x y"})
  void aChunkNameThatCouldLeaveTheDirectoryIsRefused(String name) {
    Manifest.ChunkRef ref = new Manifest.ChunkRef(name, 10, SHA);
    assertThatThrownBy(() -> StoreObjectKeys.key("bloom", "shop", "skus", ref))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageNotContaining(name.isEmpty() ? "\u0000" : name);
  }

  @Test
  void aDigestThatIsNotSha256IsRefused() {
    Manifest.ChunkRef ref = new Manifest.ChunkRef("skus-bloom-v1-0", 10, "../../x");
    assertThatThrownBy(() -> StoreObjectKeys.key("bloom", "shop", "skus", ref))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @ParameterizedTest
  @ValueSource(strings = {"/abs", "a//b", "a/../b", "..", "a/", "a b"})
  void prefixesThatCouldEscapeOrCollideAreRefused(String prefix) {
    assertThat(StoreObjectKeys.isStorePrefix(prefix)).isFalse();
    assertThatThrownBy(() -> StoreObjectKeys.filterDirectory(prefix, "shop", "skus"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void namespaceAndFilterMustBePlainSegments() {
    assertThatThrownBy(() -> StoreObjectKeys.filterDirectory("bloom", "shop/x", "skus"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> StoreObjectKeys.filterDirectory("bloom", "shop", ".."))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void parseIgnoresEverythingThatIsNotAChunkOfThisFilter() {
    String dir = "bloom/shop/skus/";
    assertThat(StoreObjectKeys.parse(dir, "bloom/shop/skus-2/skus-2-bloom-v1-0." + SHA)).isEmpty();
    assertThat(StoreObjectKeys.parse(dir, dir + "nested/skus-bloom-v1-0." + SHA)).isEmpty();
    assertThat(StoreObjectKeys.parse(dir, dir + "skus-bloom-v1-0." + SHA.toUpperCase())).isEmpty();
    assertThat(StoreObjectKeys.parse(dir, dir + "skus-bloom-v1-0")).isEmpty();
    assertThat(StoreObjectKeys.parse(dir, dir + "." + SHA)).isEmpty();
    assertThat(StoreObjectKeys.parse(dir, null)).isEmpty();
  }

  @Test
  void storeNamesAreDnsLabels() {
    assertThat(StoreObjectKeys.isStoreName("primary-eu")).isTrue();
    assertThat(StoreObjectKeys.isStoreName("a".repeat(64))).isFalse();
    assertThat(StoreObjectKeys.isStoreName("Primary")).isFalse();
    assertThat(StoreObjectKeys.isStoreName("a.b")).isFalse();
    assertThat(StoreObjectKeys.isStoreName(null)).isFalse();
  }
}
