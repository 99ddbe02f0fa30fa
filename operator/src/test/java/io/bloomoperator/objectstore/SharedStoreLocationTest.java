package io.bloomoperator.objectstore;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.manifest;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static io.bloomoperator.testing.operator.TestStores.filter;
import static io.bloomoperator.testing.operator.TestStores.keys;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.BloomStore;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.StoreObjectKeys;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.operator.TestOperators;
import io.bloomoperator.testing.operator.TestStores;
import io.bloomoperator.testing.servers.S3Server;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * Stores named by what a tenant controls, on real servers (versitygw and a real API server): an
 * alias of the current store named as a former store (audit M2) and a spec-named store the
 * namespace may not use at the filter's deletion (audit L1).
 */
@RealKubernetes(crdDirs = "crds")
class SharedStoreLocationTest {

  private static final String OPERATOR_NAMESPACE = "bloom-s3loc-operator";
  private static final S3Server SERVER = S3Server.start();

  @RegisterExtension
  @Order(1)
  static final InProcessOperator OPERATOR =
      TestOperators.withStore(SERVER, OPERATOR_NAMESPACE)
          .setting("BLOOM_STORE_CLEANUP_TIMEOUT", "15s")
          .build();

  @AfterAll
  static void stopServer() {
    SERVER.close();
  }

  /** The keys of every object {@code m} names (base chunks and delta chunks). */
  private static List<String> named(String namespace, String filter, Manifest m) {
    List<String> keys = new ArrayList<>();
    m.chunks().forEach(c -> keys.add(StoreObjectKeys.key("bloom", namespace, filter, c)));
    m.deltas()
        .forEach(
            d ->
                d.chunks()
                    .forEach(c -> keys.add(StoreObjectKeys.key("bloom", namespace, filter, c))));
    return keys;
  }

  private static List<String> keysUnder(String bucket, String prefix) {
    try (S3Client s3 = SERVER.client()) {
      return s3.listObjectsV2Paginator(b -> b.bucket(bucket).prefix(prefix)).contents().stream()
          .map(S3Object::key)
          .toList();
    }
  }

  /**
   * Audit M2: two BloomStores on one bucket and the default prefix, both allowing the namespace.
   * Whoever may edit ConfigMaps names the alias as a former store of the filter: no object of the
   * published version may go, and a reader that starts afterwards loads the filter. Both stores are
   * flagged (condition and Warning event).
   */
  @Test
  void aFormerStoreThatIsAnAliasOfTheCurrentOneKeepsThePublishedVersion(
      KubernetesClient client, TestNamespace ns) throws Exception {
    long tag = System.nanoTime() % 100000;
    String bucket = SERVER.createBucket("alias");
    String main = "main-" + tag;
    String alias = "alias-" + tag;
    TestStores.store(main).on(SERVER, bucket).allowing(ns.name()).create(client);
    TestStores.store(alias).on(SERVER, bucket).allowing(ns.name()).create(client);
    List<String> keys = keys(2000, "k");
    apply(client, ns.name(), filter("f", main, keys));
    awaitStatus(client, ns.name(), "f", f -> ready(f, "True", Reasons.PUBLISHED));
    Manifest published = manifest(client, ns.name(), "f");
    List<String> needed = named(ns.name(), "f", published);
    assertThat(needed).hasSizeGreaterThan(1);
    String directory = StoreObjectKeys.filterDirectory("bloom", ns.name(), "f");
    assertThat(keysUnder(bucket, directory)).containsAll(needed);

    // Past the 1 s grace period: the objects are old enough for any clean-up.
    Thread.sleep(1500);
    client
        .configMaps()
        .inNamespace(ns.name())
        .withName(SnapshotNames.manifestName("f"))
        .edit(
            c -> {
              c.getMetadata()
                  .getAnnotations()
                  .put(PublishedSnapshot.ANNOTATION_FORMER_STORES, alias);
              return c;
            });

    // The manifest watch reconciles at once; on main the clean-up deleted every object here.
    await()
        .during(Duration.ofSeconds(10))
        .atMost(Duration.ofSeconds(15))
        .pollInterval(Duration.ofMillis(250))
        .until(() -> keysUnder(bucket, directory).containsAll(needed));
    var filter = client.resources(BloomFilter.class).inNamespace(ns.name()).withName("f").get();
    assertThat(ready(filter, "True", Reasons.PUBLISHED)).isTrue();
    assertThat(manifest(client, ns.name(), "f").version()).isEqualTo(published.version());

    // A reader starting now: every chunk the manifest names, from the store, verified.
    try (S3Client s3 = SERVER.client()) {
      BloomFilterBits bits =
          SnapshotDecoder.decode(
              manifest(client, ns.name(), "f"),
              (index, ref) -> {
                try {
                  return s3.getObjectAsBytes(
                          b ->
                              b.bucket(bucket)
                                  .key(StoreObjectKeys.key("bloom", ns.name(), "f", ref)))
                      .asByteArray();
                } catch (NoSuchKeyException e) {
                  return null;
                }
              });
      assertThat(keys).allSatisfy(k -> assertThat(bits.mightContainString(k)).isTrue());
    }

    // The administrator is told, on both stores.
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              assertThat(locationShared(client, alias))
                  .isNotNull()
                  .satisfies(c -> assertThat(c.getStatus()).isEqualTo("True"))
                  .satisfies(c -> assertThat(c.getReason()).isEqualTo(SharedLocations.SAME))
                  .satisfies(c -> assertThat(c.getMessage()).contains(main));
              assertThat(locationShared(client, main))
                  .isNotNull()
                  .satisfies(c -> assertThat(c.getStatus()).isEqualTo("True"))
                  .satisfies(c -> assertThat(c.getMessage()).contains(alias));
              assertThat(warnings(client, main)).isNotEmpty();
              assertThat(warnings(client, alias)).isNotEmpty();
            });
    // Nothing of the administrator's definition in the flag.
    assertThat(
            Serialization.asJson(
                client.resources(BloomStore.class).withName(main).get().getStatus()))
        .doesNotContain(bucket)
        .doesNotContain(String.valueOf(SERVER.port()));
  }

  private static Condition locationShared(KubernetesClient client, String store) {
    BloomStore s = client.resources(BloomStore.class).withName(store).get();
    if (s == null || s.getStatus() == null || s.getStatus().getConditions() == null) {
      return null;
    }
    return s.getStatus().getConditions().stream()
        .filter(c -> SharedLocations.CONDITION.equals(c.getType()))
        .findFirst()
        .orElse(null);
  }

  private static List<Event> warnings(KubernetesClient client, String store) {
    return client.v1().events().inNamespace("default").list().getItems().stream()
        .filter(e -> store.equals(e.getInvolvedObject().getName()))
        .filter(e -> SharedLocations.EVENT.equals(e.getReason()))
        .toList();
  }

  /**
   * Audit L1: a filter's spec names a store that does not allow its namespace, the author adds the
   * store finalizer itself and deletes the filter. The operator must not list or delete anything in
   * that store on the namespace's behalf: the objects there (left, say, while the namespace was
   * allowed) stay for the administrator.
   */
  @Test
  void theFinalizerLeavesAloneAStoreThatDoesNotAllowTheNamespace(
      KubernetesClient client, TestNamespace ns) throws Exception {
    long tag = System.nanoTime() % 100000;
    String bucket = SERVER.createBucket("other");
    String other = "other-" + tag;
    TestStores.store(other).on(SERVER, bucket).allowing("someone-else").create(client);
    List<String> planted = new ArrayList<>();
    try (S3Client s3 = SERVER.client()) {
      for (int i = 0; i < 2; i++) {
        byte[] data = ("chunk " + i).getBytes(StandardCharsets.UTF_8);
        String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
        String key =
            StoreObjectKeys.key(
                "bloom",
                ns.name(),
                "f",
                new Manifest.ChunkRef(SnapshotNames.chunkName("f", 1, i), data.length, sha));
        s3.putObject(b -> b.bucket(bucket).key(key), RequestBody.fromBytes(data));
        planted.add(key);
      }
    }
    String yaml =
        filter("f", other, List.of("a", "b"))
            .replace(
                "metadata: {name: f}",
                "metadata: {name: f, finalizers: [bloomoperator.io/store-objects]}");
    apply(client, ns.name(), yaml);
    awaitStatus(client, ns.name(), "f", f -> ready(f, "False", Reasons.STORE_NOT_ALLOWED));

    client.resources(BloomFilter.class).inNamespace(ns.name()).withName("f").delete();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                client.resources(BloomFilter.class).inNamespace(ns.name()).withName("f").get()
                    == null);
    assertThat(keysUnder(bucket, StoreObjectKeys.filterDirectory("bloom", ns.name(), "f")))
        .containsExactlyInAnyOrderElementsOf(planted);
  }
}
