package io.bloomoperator.objectstore;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomStore;
import io.bloomoperator.api.BloomStoreSpec;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.util.List;
import org.junit.jupiter.api.Test;

class StoreLocationTest {

  private static BloomStoreSpec spec(String endpoint, String bucket, String prefix) {
    BloomStoreSpec spec = new BloomStoreSpec();
    spec.setEndpoint(endpoint);
    spec.setBucket(bucket);
    spec.setPrefix(prefix);
    return spec;
  }

  private static BloomStore store(String name, String endpoint, String bucket, String prefix) {
    BloomStore store = new BloomStore();
    store.setMetadata(new ObjectMetaBuilder().withName(name).build());
    store.setSpec(spec(endpoint, bucket, prefix));
    return store;
  }

  @Test
  void namesAndSpellingsOfOneLocationCompareEqual() {
    StoreLocation a = StoreLocation.of(spec("https://S3.example.com", "b", null));
    assertThat(StoreLocation.of(spec("https://s3.example.com:443/", "b", "bloom"))).isEqualTo(a);
    assertThat(StoreLocation.of(spec("https://s3.example.com.", "b", "bloom"))).isEqualTo(a);
    assertThat(StoreLocation.of(spec("https://s3.example.com", "b", "other"))).isNotEqualTo(a);
    assertThat(StoreLocation.of(spec("https://s3.example.com", "c", "bloom"))).isNotEqualTo(a);
    assertThat(StoreLocation.of(spec("https://s3.example.com:9000", "b", "bloom"))).isNotEqualTo(a);
    assertThat(StoreLocation.of(spec("http://s3.example.com:80", "b", "bloom")))
        .isEqualTo(StoreLocation.of(spec("http://s3.example.com", "b", "bloom")));
  }

  @Test
  void nestedPrefixesOverlapSiblingsDoNot() {
    StoreLocation outer = StoreLocation.of(spec("https://s", "b", "p"));
    assertThat(outer.overlaps(StoreLocation.of(spec("https://s", "b", "p/q")))).isTrue();
    assertThat(StoreLocation.of(spec("https://s", "b", "p/q")).overlaps(outer)).isTrue();
    assertThat(outer.overlaps(StoreLocation.of(spec("https://s", "b", "pq")))).isFalse();
    assertThat(outer.overlaps(StoreLocation.of(spec("https://s", "b", "")))).isTrue();
    assertThat(outer.overlaps(StoreLocation.of(spec("https://s", "c", "p")))).isFalse();
  }

  @Test
  void sharedLocationsNameTheOtherStoresOnly() {
    BloomStore main = store("main", "https://s", "b", null);
    BloomStore alias = store("alias", "https://S:443", "b", "bloom");
    BloomStore inner = store("inner", "https://s", "b", "bloom/x");
    BloomStore apart = store("apart", "https://s", "b", "other");
    List<BloomStore> all = List.of(main, alias, inner, apart);

    SharedLocations.Overlap overlap = SharedLocations.of(main, all);
    assertThat(overlap.reason()).isEqualTo(SharedLocations.SAME);
    assertThat(overlap.others()).containsExactly("alias", "inner");
    assertThat(overlap.message()).contains("alias").doesNotContain("https://s");
    assertThat(SharedLocations.of(inner, all).reason()).isEqualTo(SharedLocations.NESTED);
    assertThat(SharedLocations.of(apart, all).shared()).isFalse();
    assertThat(SharedLocations.of(apart, all).reason()).isEqualTo(SharedLocations.OWN);
  }
}
