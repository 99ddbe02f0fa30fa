package io.bloomoperator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.snapshot.SnapshotNames;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.Cache;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Which ConfigMap events reach which BloomFilter: only its own manifest's. */
class ManifestEventsTest {

  private static final String NS = "shop";

  private static BloomFilter filter(String name, String uid) {
    BloomFilter filter = new BloomFilter();
    filter.getMetadata().setNamespace(NS);
    filter.getMetadata().setName(name);
    filter.getMetadata().setUid(uid);
    return filter;
  }

  /** The operator's cache of BloomFilters, as JOSDK hands it to event sources. */
  private record Filters(Map<ResourceID, BloomFilter> byId) implements Cache<BloomFilter> {
    @Override
    public Optional<BloomFilter> get(ResourceID id) {
      return Optional.ofNullable(byId.get(id));
    }

    @Override
    public Stream<ResourceID> keys() {
      return byId.keySet().stream();
    }

    @Override
    public Stream<BloomFilter> list(Predicate<BloomFilter> predicate) {
      return byId.values().stream().filter(predicate);
    }
  }

  private static ConfigMap configMap(String name, String ownerName, String ownerUid, boolean ctl) {
    var builder = new ConfigMapBuilder().withNewMetadata().withNamespace(NS).withName(name);
    if (ownerName != null) {
      builder.withOwnerReferences(
          new OwnerReferenceBuilder()
              .withApiVersion("bloomoperator.io/v1alpha1")
              .withKind("BloomFilter")
              .withName(ownerName)
              .withUid(ownerUid)
              .withController(ctl)
              .build());
    }
    return builder.endMetadata().build();
  }

  @Test
  void onlyAFiltersOwnManifestMapsToIt() {
    BloomFilter ids = filter("ids", "uid-ids");
    ManifestEvents events =
        new ManifestEvents(
            null, Set.of(NS), new Filters(Map.of(ResourceID.fromResource(ids), ids)));
    String manifest = SnapshotNames.manifestName("ids");

    assertThat(events.filterOf(configMap(manifest, "ids", "uid-ids", true)))
        .contains(new ResourceID("ids", NS));
    assertThat(events.filterOf(configMap(manifest, null, null, false)))
        .as("no ownerReference: a look-alike")
        .isEmpty();
    assertThat(events.filterOf(configMap(manifest, "ids", "uid-of-a-deleted-ids", true)))
        .as("another (earlier) filter of that name")
        .isEmpty();
    assertThat(events.filterOf(configMap(manifest, "ids", "uid-ids", false)))
        .as("an owner, not the controller")
        .isEmpty();
    assertThat(events.filterOf(configMap("decoy-1", "ids", "uid-ids", true)))
        .as("not the filter's manifest name")
        .isEmpty();
    assertThat(events.filterOf(configMap("other-bloom", "other", "uid-other", true)))
        .as("a filter the operator does not know")
        .isEmpty();
  }
}
