package io.bloomoperator.objectstore;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.manifest;
import static io.bloomoperator.reconcile.SnapshotFixtures.mergePatch;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static io.bloomoperator.reconcile.SnapshotFixtures.snapshotConfigMaps;
import static io.bloomoperator.testing.operator.TestStores.filter;
import static io.bloomoperator.testing.operator.TestStores.keys;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
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
import io.bloomoperator.status.ReadyCondition;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RequestLog;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.operator.LogCapture;
import io.bloomoperator.testing.operator.TestOperators;
import io.bloomoperator.testing.operator.TestStores;
import io.bloomoperator.testing.servers.S3Server;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * The object-store transport on real servers (versitygw and a real API server): an author names a
 * store and nothing else; the chunks go to the store, the manifest alone to etcd; a store that is
 * undefined, forbidden, down or full leaves the published version serving with a reason that names
 * only the store; deleting the filter deletes its objects; leftovers of a crashed publish go.
 */
@RealKubernetes(crdDirs = "crds")
class ObjectStoreTransportTest {

  /** Where the operator reads the stores' credentials Secrets. */
  private static final String OPERATOR_NAMESPACE = "bloom-s3op-operator";

  /** The store's own server: one test stops it. */
  private static final S3Server SERVER = S3Server.start();

  private static final AtomicInteger STORES = new AtomicInteger();

  /** Every request of the operator's own client. */
  private static final RequestLog OPERATOR_REQUESTS = new RequestLog();

  @RegisterExtension
  @Order(1)
  static final InProcessOperator OPERATOR =
      TestOperators.withStore(SERVER, OPERATOR_NAMESPACE)
          .setting("BLOOM_STORE_CLEANUP_TIMEOUT", "15s")
          .build()
          .withRequestLog(OPERATOR_REQUESTS);

  @AfterAll
  static void stopServer() {
    SERVER.close();
  }

  /** A store on {@link #SERVER} with a bucket of its own, allowing {@code allowedNamespace}. */
  private record Store(String name, String bucket) {}

  private static Store store(KubernetesClient client, String allowedNamespace, Long budget) {
    String name = "store-" + STORES.incrementAndGet() + "-" + System.nanoTime() % 100000;
    return store(
        client, name, allowedNamespace, budget == null ? "" : "namespaceBudgetBytes: " + budget);
  }

  /** Store {@code name} on a bucket of its own; {@code moreSpec}: one more line of its spec. */
  private static Store store(
      KubernetesClient client, String name, String allowedNamespace, String moreSpec) {
    String bucket = SERVER.createBucket("bloom");
    TestStores.store(name)
        .on(SERVER, bucket)
        .allowing(allowedNamespace)
        .with(moreSpec)
        .create(client);
    return new Store(name, bucket);
  }

  private static List<S3Object> objects(Store store, String namespace, String filter) {
    try (S3Client s3 = SERVER.client()) {
      return s3.listObjectsV2(
              b ->
                  b.bucket(store.bucket())
                      .prefix(StoreObjectKeys.filterDirectory("bloom", namespace, filter)))
          .contents();
    }
  }

  /** What a reader does: every chunk the manifest names, from the store, verified. */
  private static BloomFilterBits read(Store store, String namespace, String filter, Manifest m)
      throws Exception {
    try (S3Client s3 = SERVER.client()) {
      SnapshotDecoder.ChunkSource source =
          (index, ref) -> {
            try {
              return s3.getObjectAsBytes(
                      b ->
                          b.bucket(store.bucket())
                              .key(StoreObjectKeys.key("bloom", namespace, filter, ref)))
                  .asByteArray();
            } catch (NoSuchKeyException e) {
              return null;
            }
          };
      return SnapshotDecoder.decode(m, source);
    }
  }

  private static String status(KubernetesClient client, String namespace, String name) {
    return Serialization.asJson(
        client
            .resources(BloomFilter.class)
            .inNamespace(namespace)
            .withName(name)
            .get()
            .getStatus());
  }

  @Test
  void aFilterNamingAnUndefinedStoreIsNotPublished(KubernetesClient client, TestNamespace ns) {
    apply(client, ns.name(), filter("f", "no-such-store", List.of("a", "b")));

    var failed =
        awaitStatus(client, ns.name(), "f", f -> ready(f, "False", Reasons.STORE_NOT_FOUND));
    assertThat(ReadyCondition.of(failed).orElseThrow().getMessage()).contains("no-such-store");
    assertThat(snapshotConfigMaps(client, ns.name(), "f")).isEmpty();
  }

  @Test
  void aStoreServesOnlyTheNamespacesItAllows(KubernetesClient client, TestNamespace ns) {
    Store store = store(client, "someone-else", null);
    apply(client, ns.name(), filter("f", store.name(), List.of("a", "b")));

    var refused =
        awaitStatus(client, ns.name(), "f", f -> ready(f, "False", Reasons.STORE_NOT_ALLOWED));
    String message = ReadyCondition.of(refused).orElseThrow().getMessage();
    assertThat(message).contains(store.name()).contains(ns.name());
    // Nothing of the administrator's definition reaches the author.
    assertThat(status(client, ns.name(), "f"))
        .doesNotContain(store.bucket())
        .doesNotContain(String.valueOf(SERVER.port()))
        .doesNotContain(SERVER.accessKey());
    assertThat(objects(store, ns.name(), "f")).isEmpty();

    // The administrator allows the namespace by a label: published on the next retry.
    client
        .namespaces()
        .withName(ns.name())
        .edit(
            n ->
                new NamespaceBuilder(n)
                    .editMetadata()
                    .addToLabels("bloom-s3", "yes")
                    .endMetadata()
                    .build());
    client
        .resources(BloomStore.class)
        .withName(store.name())
        .edit(
            s -> {
              var selector = new io.fabric8.kubernetes.api.model.LabelSelector();
              selector.setMatchLabels(Map.of("bloom-s3", "yes"));
              s.getSpec().getAllowedNamespaces().setSelector(selector);
              return s;
            });
    awaitStatus(client, ns.name(), "f", f -> ready(f, "True", Reasons.PUBLISHED));
  }

  @Test
  void chunksGoToTheStoreAndOnlyTheManifestToEtcd(KubernetesClient client, TestNamespace ns)
      throws Exception {
    Store store = store(client, ns.name(), null);
    List<String> keys = keys(2000, "sku");
    apply(client, ns.name(), filter("skus", store.name(), keys));

    var published =
        awaitStatus(client, ns.name(), "skus", f -> ready(f, "True", Reasons.PUBLISHED));
    assertThat(published.getMetadata().getFinalizers()).contains("bloomoperator.io/store-objects");

    Manifest m = manifest(client, ns.name(), "skus");
    assertThat(m.store()).isEqualTo(store.name());
    assertThat(m.chunks()).hasSizeGreaterThan(1);
    assertThat(snapshotConfigMaps(client, ns.name(), "skus"))
        .as("etcd holds only the manifest")
        .extracting(c -> c.getMetadata().getName())
        .containsExactly(SnapshotNames.manifestName("skus"));

    // Every object the manifest names exists under the filter's directory, with the digest its
    // key carries.
    List<S3Object> objects = objects(store, ns.name(), "skus");
    assertThat(objects).hasSize(m.chunks().size());
    try (S3Client s3 = SERVER.client()) {
      for (Manifest.ChunkRef ref : m.chunks()) {
        String key = StoreObjectKeys.key("bloom", ns.name(), "skus", ref);
        byte[] bytes = s3.getObjectAsBytes(b -> b.bucket(store.bucket()).key(key)).asByteArray();
        assertThat(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes)))
            .isEqualTo(ref.sha256())
            .isEqualTo(key.substring(key.lastIndexOf('.') + 1));
      }
    }
    BloomFilterBits bits = read(store, ns.name(), "skus", m);
    assertThat(keys).allSatisfy(k -> assertThat(bits.mightContainString(k)).isTrue());
  }

  @Test
  void aStoreThatIsDownKeepsThePublishedVersionAndRecovers(
      KubernetesClient client, TestNamespace ns) throws Exception {
    Store store = store(client, ns.name(), null);
    apply(client, ns.name(), filter("f", store.name(), keys(500, "v1")));
    awaitStatus(client, ns.name(), "f", f -> ready(f, "True", Reasons.PUBLISHED));
    Manifest first = manifest(client, ns.name(), "f");

    SERVER.stop();
    try {
      mergePatch(
          client,
          ns.name(),
          "f",
          Map.of("spec", Map.of("source", Map.of("inline", keys(500, "v2")))));
      var down =
          awaitStatus(client, ns.name(), "f", f -> ready(f, "False", Reasons.STORE_UNAVAILABLE));
      assertThat(ReadyCondition.of(down).orElseThrow().getMessage())
          .contains(store.name())
          .doesNotContain("127.0.0.1")
          .doesNotContain(store.bucket());
      assertThat(manifest(client, ns.name(), "f"))
          .as("the published version keeps serving")
          .isEqualTo(first);
    } finally {
      SERVER.restart();
    }

    var recovered =
        await()
            .atMost(Duration.ofSeconds(90))
            .pollInterval(Duration.ofMillis(500))
            .until(
                () ->
                    client.resources(BloomFilter.class).inNamespace(ns.name()).withName("f").get(),
                f -> ready(f, "True", Reasons.PUBLISHED));
    Manifest second = manifest(client, ns.name(), "f");
    assertThat(second.version()).isGreaterThan(first.version());
    assertThat(recovered.getStatus().getVersion()).isEqualTo(second.version());
    BloomFilterBits bits = read(store, ns.name(), "f", second);
    assertThat(bits.mightContainString("v2-7")).isTrue();
  }

  @Test
  void leftoversOfACrashedPublishAreRemovedAndNoManifestNamesAMissingObject(
      KubernetesClient client, TestNamespace ns) throws Exception {
    Store store = store(client, ns.name(), null);
    apply(client, ns.name(), filter("f", store.name(), keys(300, "a")));
    awaitStatus(client, ns.name(), "f", f -> ready(f, "True", Reasons.PUBLISHED));
    Manifest published = manifest(client, ns.name(), "f");

    // What an operator killed mid-upload leaves: chunks of the next version, no manifest naming
    // them.
    String directory = StoreObjectKeys.filterDirectory("bloom", ns.name(), "f");
    List<String> leftovers =
        List.of(
            StoreObjectKeys.key(
                directory,
                SnapshotNames.chunkName("f", published.version() + 1, 0),
                "ab".repeat(32)),
            StoreObjectKeys.key(
                directory,
                SnapshotNames.deltaChunkName("f", published.version() + 1, 0),
                "cd".repeat(32)));
    try (S3Client s3 = SERVER.client()) {
      for (String key : leftovers) {
        s3.putObject(b -> b.bucket(store.bucket()).key(key), RequestBody.fromString("partial"));
      }
    }
    // A rebuild makes the janitor run; the leftovers are older than the grace period (1s) by then.
    Thread.sleep(1500);
    mergePatch(
        client, ns.name(), "f", Map.of("spec", Map.of("source", Map.of("inline", keys(300, "b")))));

    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(objects(store, ns.name(), "f"))
                    .extracting(S3Object::key)
                    .doesNotContainAnyElementsOf(leftovers));
    Manifest now = manifest(client, ns.name(), "f");
    assertThat(read(store, ns.name(), "f", now)).isNotNull();
  }

  /**
   * An operator killed while uploading version N, whose successor builds N again from a changed
   * source, leaves objects of N under other digests: they belong to the published part, yet no
   * manifest names them, and the janitor must not keep them for as long as N is published.
   */
  @Test
  void aLeftoverOfThePublishedVersionUnderAnotherDigestIsRemoved(
      KubernetesClient client, TestNamespace ns) throws Exception {
    Store store = store(client, ns.name(), null);
    apply(client, ns.name(), filter("same", store.name(), keys(300, "a")));
    awaitStatus(client, ns.name(), "same", f -> ready(f, "True", Reasons.PUBLISHED));
    Manifest published = manifest(client, ns.name(), "same");
    String leftover =
        StoreObjectKeys.key(
            StoreObjectKeys.filterDirectory("bloom", ns.name(), "same"),
            SnapshotNames.chunkName("same", published.version(), 0),
            "ef".repeat(32));
    try (S3Client s3 = SERVER.client()) {
      s3.putObject(b -> b.bucket(store.bucket()).key(leftover), RequestBody.fromString("old"));
    }
    // Older than the grace period (1 s); a spec change without new content makes the janitor run
    // while the minimum publish interval (10 s) still holds the rebuild back.
    Thread.sleep(1500);
    mergePatch(client, ns.name(), "same", Map.of("spec", Map.of("refreshInterval", "59m")));
    await()
        .atMost(Duration.ofSeconds(6))
        .untilAsserted(
            () ->
                assertThat(objects(store, ns.name(), "same"))
                    .extracting(S3Object::key)
                    .doesNotContain(leftover));
    Manifest now = manifest(client, ns.name(), "same");
    assertThat(now.version()).isEqualTo(published.version());
    assertThat(read(store, ns.name(), "same", now).mightContainString("a-7")).isTrue();
  }

  @Test
  void deletingTheFilterDeletesEveryObject(KubernetesClient client, TestNamespace ns) {
    Store store = store(client, ns.name(), null);
    apply(client, ns.name(), filter("gone", store.name(), keys(2000, "x")));
    awaitStatus(client, ns.name(), "gone", f -> ready(f, "True", Reasons.PUBLISHED));
    assertThat(objects(store, ns.name(), "gone")).isNotEmpty();

    client.resources(BloomFilter.class).inNamespace(ns.name()).withName("gone").delete();

    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                client.resources(BloomFilter.class).inNamespace(ns.name()).withName("gone").get()
                    == null);
    assertThat(objects(store, ns.name(), "gone")).isEmpty();
  }

  @Test
  void aFilterThatLeavesAStoreHasItsObjectsThereDeletedAfterTheGracePeriod(
      KubernetesClient client, TestNamespace ns) throws Exception {
    Store first = store(client, ns.name(), null);
    Store second = store(client, ns.name(), null);
    apply(client, ns.name(), filter("mover", first.name(), keys(2000, "m")));
    awaitStatus(client, ns.name(), "mover", f -> ready(f, "True", Reasons.PUBLISHED));
    assertThat(objects(first, ns.name(), "mover")).isNotEmpty();

    // Switched to another store: the first one's objects go once the grace period is over.
    moveTo(client, ns.name(), "mover", second.name());
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(manifest(client, ns.name(), "mover").store()).isEqualTo(second.name()));
    assertThat(objects(second, ns.name(), "mover")).isNotEmpty();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(objects(first, ns.name(), "mover")).isEmpty());

    // Store removed from the spec: back to ConfigMaps, the second store's objects go as well.
    moveTo(client, ns.name(), "mover", null);
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(manifest(client, ns.name(), "mover").store()).isNull());
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(objects(second, ns.name(), "mover")).isEmpty());
    BloomFilter served =
        awaitStatus(client, ns.name(), "mover", f -> ready(f, "True", Reasons.PUBLISHED));
    assertThat(served.getStatus()).isNotNull();
  }

  @Test
  void aLargeFilterNamingNoStoreGoesToTheDefaultStoreItsNamespaceMayUse(
      KubernetesClient client, TestNamespace ns) throws Exception {
    long tag = System.nanoTime() % 100000;
    // Sorts first and is a default for everything, but does not allow this namespace.
    Store forbidden = defaultStore(client, "dflt-a-" + tag, "someone-else", 1);
    Store chosen = defaultStore(client, "dflt-c-" + tag, ns.name(), 1000);
    // ~2.4 kB planned (2000 keys at 1 %): over the threshold; 10 keys: under it.
    apply(client, ns.name(), unplaced("big", 2000));
    apply(client, ns.name(), unplaced("small", 10));
    awaitStatus(client, ns.name(), "big", f -> ready(f, "True", Reasons.PUBLISHED));
    awaitStatus(client, ns.name(), "small", f -> ready(f, "True", Reasons.PUBLISHED));

    assertThat(manifest(client, ns.name(), "big").store()).isEqualTo(chosen.name());
    assertThat(objects(chosen, ns.name(), "big")).isNotEmpty();
    assertThat(objects(forbidden, ns.name(), "big")).isEmpty();
    assertThat(snapshotConfigMaps(client, ns.name(), "big")).hasSize(1);
    assertThat(manifest(client, ns.name(), "small").store()).isNull();
    assertThat(objects(chosen, ns.name(), "small")).isEmpty();

    // A second default store for the namespace: the one whose name sorts first is used.
    Store first = defaultStore(client, "dflt-b-" + tag, ns.name(), 1000);
    apply(client, ns.name(), unplaced("later", 2000));
    awaitStatus(client, ns.name(), "later", f -> ready(f, "True", Reasons.PUBLISHED));
    assertThat(manifest(client, ns.name(), "later").store()).isEqualTo(first.name());
  }

  /** A store named {@code name} that is the default for snapshots over {@code over} bytes. */
  private static Store defaultStore(
      KubernetesClient client, String name, String allowedNamespace, long over) {
    return store(client, name, allowedNamespace, "defaultForSnapshotsOver: " + over);
  }

  /** A filter that names no store, planned for {@code count} keys (and holding them). */
  private static String unplaced(String name, int count) {
    return """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: %s}
        spec:
          falsePositiveRate: 0.01
          expectedInsertions: %d
          snapshot: {chunkSizeBytes: 1024, retainPreviousFor: 1s}
          source:
            inline: [%s]
        """
        .formatted(name, count, String.join(", ", keys(count, name)));
  }

  /** Points {@code filter}'s snapshot at {@code store} (null: removes the field). */
  private static void moveTo(KubernetesClient client, String namespace, String filter, String store)
      throws Exception {
    client
        .resources(BloomFilter.class)
        .inNamespace(namespace)
        .withName(filter)
        .edit(
            f -> {
              f.getSpec().getSnapshot().setStore(store);
              return f;
            });
  }

  @Test
  void aNamespaceOverTheStoreBudgetPublishesNothing(KubernetesClient client, TestNamespace ns) {
    // Room for the small filter's objects, not for the big one's as well.
    Store store = store(client, ns.name(), 4096L);
    apply(client, ns.name(), filter("small", store.name(), keys(100, "s")));
    awaitStatus(client, ns.name(), "small", f -> ready(f, "True", Reasons.PUBLISHED));

    apply(client, ns.name(), filter("big", store.name(), keys(5000, "b")));
    var refused =
        awaitStatus(
            client, ns.name(), "big", f -> ready(f, "False", Reasons.STORE_BUDGET_EXCEEDED));
    assertThat(ReadyCondition.of(refused).orElseThrow().getMessage())
        .contains(store.name())
        .contains("namespaceBudgetBytes");
    assertThat(objects(store, ns.name(), "big")).isEmpty();
    assertThat(snapshotConfigMaps(client, ns.name(), "big")).isEmpty();
  }

  private static io.fabric8.kubernetes.api.model.Condition storeReady(
      KubernetesClient client, String name) {
    BloomStore store = client.resources(BloomStore.class).withName(name).get();
    return store == null || store.getStatus() == null || store.getStatus().getConditions() == null
        ? null
        : store.getStatus().getConditions().stream()
            .filter(c -> "Ready".equals(c.getType()))
            .findFirst()
            .orElse(null);
  }

  @Test
  void aStoreReportsWhetherTheOperatorReachesItsBucket(KubernetesClient client) {
    Store store = store(client, "nobody", null);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              var ready = storeReady(client, store.name());
              assertThat(ready).isNotNull();
              assertThat(ready.getStatus()).isEqualTo("True");
              assertThat(ready.getObservedGeneration()).isEqualTo(1L);
            });

    client
        .resources(BloomStore.class)
        .withName(store.name())
        .edit(
            s -> {
              s.getSpec().setBucket("no-such-bucket-" + System.nanoTime() % 100000);
              return s;
            });
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              var ready = storeReady(client, store.name());
              assertThat(ready.getStatus()).isEqualTo("False");
              assertThat(ready.getReason()).isEqualTo(Reasons.STORE_UNAVAILABLE);
              assertThat(ready.getObservedGeneration()).isEqualTo(2L);
              assertThat(ready.getMessage()).contains("HTTP 404").doesNotContain("127.0.0.1");
            });
  }

  /**
   * A store's endpoint is judged like an HTTP source's URL: a BloomStore pointing at the cloud
   * metadata address (a mistake, or a compromised definition) makes the operator send nothing
   * there.
   */
  @Test
  void anEndpointTheEgressPolicyRefusesIsNeverContacted(KubernetesClient client, TestNamespace ns) {
    String name = "metadata-" + System.nanoTime() % 100000;
    TestStores.store(name)
        .at("http://169.254.169.254", "latest")
        .allowing(ns.name())
        .create(client);
    apply(client, ns.name(), filter("f", name, List.of("a")));

    var refused =
        awaitStatus(client, ns.name(), "f", f -> ready(f, "False", Reasons.STORE_UNAVAILABLE));
    assertThat(ReadyCondition.of(refused).orElseThrow().getMessage())
        .contains(name)
        .contains("egress policy")
        .doesNotContain("169.254");
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(storeReady(client, name).getMessage())
                    .contains("refused by the egress policy"));
  }

  /**
   * The BloomStores a filter naming no store might go to are read from a cache, not listed from the
   * API server on every reconcile; a default store created or changed later still counts at the
   * filter's next reconcile.
   */
  @Test
  void defaultStoresCostNoApiRequestPerReconcile(KubernetesClient client, TestNamespace ns)
      throws Exception {
    apply(client, ns.name(), unplaced("busy", 2000));
    awaitStatus(client, ns.name(), "busy", f -> ready(f, "True", Reasons.PUBLISHED));
    int reconciles = 8;
    long listsBefore = bloomStoreLists();
    for (int i = 1; i <= reconciles; i++) {
      reconcileOnce(client, ns.name(), "busy", i);
    }
    long lists = bloomStoreLists() - listsBefore;
    System.out.printf(
        "default stores: %d BloomStore list(s) in %d reconciles%n", lists, reconciles);
    // An informer's watch may be re-opened once in a while; a list per reconcile is 8 here.
    assertThat(lists)
        .as("BloomStore lists during %d reconciles", reconciles)
        .isLessThanOrEqualTo(1);
    assertThat(manifest(client, ns.name(), "busy").store()).isNull();

    // Created after the cache was filled: the next reconcile places the filter there (the
    // informer sees the change within moments; each poll is one more reconcile).
    AtomicInteger round = new AtomicInteger(reconciles);
    Store later = defaultStore(client, "dflt-late-" + System.nanoTime() % 100000, ns.name(), 1000);
    await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofSeconds(1))
        .untilAsserted(
            () -> {
              reconcileOnce(client, ns.name(), "busy", round.incrementAndGet());
              assertThat(manifest(client, ns.name(), "busy").store()).isEqualTo(later.name());
            });

    // Changed: a threshold above the filter's size sends it back to ConfigMaps.
    client
        .resources(BloomStore.class)
        .withName(later.name())
        .edit(
            s -> {
              s.getSpec().setDefaultForSnapshotsOver(1L << 40);
              return s;
            });
    await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofSeconds(1))
        .untilAsserted(
            () -> {
              reconcileOnce(client, ns.name(), "busy", round.incrementAndGet());
              assertThat(manifest(client, ns.name(), "busy").store()).isNull();
            });
  }

  /** Requests of the operator's client to the BloomStore collection (list or watch). */
  private static long bloomStoreLists() {
    return OPERATOR_REQUESTS.paths().stream()
        .filter(p -> p.startsWith("GET ") && p.endsWith("/bloomoperator.io/v1alpha1/bloomstores"))
        .count();
  }

  /**
   * Changes the filter's keys and waits until the operator has reconciled that change (which places
   * the filter, whether or not the minimum publish interval lets it publish yet).
   */
  private static void reconcileOnce(
      KubernetesClient client, String namespace, String filter, int round) {
    mergePatch(
        client,
        namespace,
        filter,
        Map.of("spec", Map.of("source", Map.of("inline", keys(2000, filter + round)))));
    long generation =
        client
            .resources(BloomFilter.class)
            .inNamespace(namespace)
            .withName(filter)
            .get()
            .getMetadata()
            .getGeneration();
    awaitStatus(
        client,
        namespace,
        filter,
        f ->
            f.getStatus().getObservedGeneration() != null
                && f.getStatus().getObservedGeneration() >= generation);
  }

  /**
   * The former-stores annotation of a manifest ConfigMap is anyone's who may edit ConfigMaps in the
   * namespace. Two stores share a bucket, the victim's prefix inside the other's (a layout the
   * administrator chose; nothing tells the operator it is wrong), so the directory of the
   * attacker's filter named like the victim's namespace, in the outer store, holds the victim's
   * objects. The attacker names the outer store, which does not allow its namespace, as a former
   * store of its filter: the victim's objects must all survive the attacker's next publish and its
   * clean-up.
   */
  @Test
  void aForgedFormerStoreReachesNoOtherTenantsObjects(KubernetesClient client, TestNamespace ns)
      throws Exception {
    long tag = System.nanoTime() % 100000;
    String victimNs = "victim-" + tag;
    client
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(victimNs).endMetadata().build())
        .create();
    try {
      String bucket = SERVER.createBucket("shared");
      String outerPrefix = "p" + tag;
      String innerPrefix = outerPrefix + "/" + ns.name();
      String inner = "inner-" + tag;
      String outer = "outer-" + tag;
      TestStores.store(inner)
          .on(SERVER, bucket)
          .allowing(victimNs)
          .with("prefix: " + innerPrefix)
          .create(client);
      TestStores.store(outer)
          .on(SERVER, bucket)
          .allowing("nobody")
          .with("prefix: " + outerPrefix)
          .create(client);
      apply(client, victimNs, filter("vf", inner, keys(2000, "v")));
      awaitStatus(client, victimNs, "vf", f -> ready(f, "True", Reasons.PUBLISHED));
      String victimDirectory = StoreObjectKeys.filterDirectory(innerPrefix, victimNs, "vf");
      List<String> victimObjects = keysUnder(bucket, victimDirectory);
      assertThat(victimObjects).isNotEmpty();
      assertThat(StoreObjectKeys.filterDirectory(outerPrefix, ns.name(), victimNs))
          .as("the attacker's directory in the outer store holds the victim's")
          .isEqualTo(outerPrefix + "/" + ns.name() + "/" + victimNs + "/");

      String attacker = victimNs;
      apply(client, ns.name(), inConfigMaps(attacker, keys(10, "a")));
      awaitStatus(client, ns.name(), attacker, f -> ready(f, "True", Reasons.PUBLISHED));
      // The victim's objects are older than the attacker's grace period (1 s) from now on.
      Thread.sleep(1500);
      annotateManifest(client, ns.name(), attacker, outer + "," + inner);
      mergePatch(
          client,
          ns.name(),
          attacker,
          Map.of("spec", Map.of("source", Map.of("inline", keys(10, "b")))));
      awaitStatus(
          client,
          ns.name(),
          attacker,
          f -> ready(f, "True", Reasons.PUBLISHED) && f.getStatus().getVersion() >= 2);
      // A clean-up after the publish, once more past the grace period.
      Thread.sleep(1500);
      mergePatch(
          client,
          ns.name(),
          attacker,
          Map.of("spec", Map.of("source", Map.of("inline", keys(10, "c")))));
      awaitStatus(
          client,
          ns.name(),
          attacker,
          f -> ready(f, "True", Reasons.PUBLISHED) && f.getStatus().getVersion() >= 3);

      assertThat(keysUnder(bucket, victimDirectory)).containsAll(victimObjects);
      Manifest victim = manifest(client, victimNs, "vf");
      try (S3Client s3 = SERVER.client()) {
        BloomFilterBits bits =
            SnapshotDecoder.decode(
                victim,
                (index, ref) ->
                    s3.getObjectAsBytes(
                            b ->
                                b.bucket(bucket)
                                    .key(StoreObjectKeys.key(innerPrefix, victimNs, "vf", ref)))
                        .asByteArray());
        assertThat(bits.mightContainString("v-7")).isTrue();
      }
    } finally {
      client.namespaces().withName(victimNs).delete();
    }
  }

  /**
   * A former-stores annotation as large as the API server takes (its limit for all annotations is
   * 256 KiB; 1 MB is refused) is ignored whole: the filter keeps publishing, the text reaches no
   * log line, and the operator's next manifest does not carry it on.
   */
  @Test
  void aHugeFormerStoresAnnotationIsBoundedAndNeverEchoed(KubernetesClient client, TestNamespace ns)
      throws Exception {
    apply(client, ns.name(), inConfigMaps("f", keys(10, "a")));
    awaitStatus(client, ns.name(), "f", f -> ready(f, "True", Reasons.PUBLISHED));

    assertThatThrownBy(() -> annotateManifest(client, ns.name(), "f", "x".repeat(1 << 20)))
        .isInstanceOfSatisfying(
            KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(422));

    String marker = "zq".repeat(20);
    String huge = (marker + ",").repeat(4000) + "z".repeat(80_000);
    try (LogCapture logs = LogCapture.attach()) {
      annotateManifest(client, ns.name(), "f", huge);
      mergePatch(
          client,
          ns.name(),
          "f",
          Map.of("spec", Map.of("source", Map.of("inline", keys(10, "b")))));
      awaitStatus(
          client,
          ns.name(),
          "f",
          f -> ready(f, "True", Reasons.PUBLISHED) && f.getStatus().getVersion() >= 2);
      assertThat(logs.events())
          .noneMatch(
              e ->
                  e.getFormattedMessage().contains(marker)
                      || e.getFormattedMessage().contains("zzzzzzzzzz"));
    }
    String carried =
        client
            .configMaps()
            .inNamespace(ns.name())
            .withName(SnapshotNames.manifestName("f"))
            .get()
            .getMetadata()
            .getAnnotations()
            .get(PublishedSnapshot.ANNOTATION_FORMER_STORES);
    assertThat(carried).as("former stores carried into the next manifest").isNull();
  }

  /** A filter that keeps its snapshot in ConfigMaps, with a 1 s grace period. */
  private static String inConfigMaps(String name, List<String> keys) {
    return """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: %s}
        spec:
          falsePositiveRate: 0.01
          snapshot: {chunkSizeBytes: 1024, retainPreviousFor: 1s}
          source:
            inline: [%s]
        """
        .formatted(name, String.join(", ", keys));
  }

  /** What a tenant who may edit ConfigMaps does to the filter's manifest ConfigMap. */
  private static void annotateManifest(
      KubernetesClient client, String namespace, String filter, String formerStores) {
    client
        .configMaps()
        .inNamespace(namespace)
        .withName(SnapshotNames.manifestName(filter))
        .patch(
            io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
            Serialization.asJson(
                Map.of(
                    "metadata",
                    Map.of(
                        "annotations",
                        Map.of(PublishedSnapshot.ANNOTATION_FORMER_STORES, formerStores)))));
  }

  /** Every key under {@code prefix} of {@code bucket}, nested ones included. */
  private static List<String> keysUnder(String bucket, String prefix) {
    try (S3Client s3 = SERVER.client()) {
      return s3.listObjectsV2Paginator(b -> b.bucket(bucket).prefix(prefix)).contents().stream()
          .map(S3Object::key)
          .toList();
    }
  }
}
