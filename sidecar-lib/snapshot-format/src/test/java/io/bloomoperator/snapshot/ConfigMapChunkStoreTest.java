package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.snapshot.ChunkStore.NameTakenException;
import io.bloomoperator.snapshot.ChunkStore.Part;
import io.bloomoperator.snapshot.ChunkStore.Stored;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What publishes, clean-ups and readers rely on of {@link ConfigMapChunkStore}, against fabric8's
 * in-process API server ({@link ApiServerDispatcher}: CRUD plus set-based selectors, paged lists
 * and delete preconditions). The operator's real-API-server tests cover the same store end to end;
 * this one is fast enough for PIT.
 */
class ConfigMapChunkStoreTest {

  private static final String NS = "shop";
  private static final String FILTER = "ids";
  private static final String CONFIGMAPS = "/api/v1/namespaces/" + NS + "/configmaps";

  private static final OwnerReference OWNER = owner("uid-1", true);

  private ApiServerDispatcher api;
  private KubernetesMockServer server;
  private KubernetesClient client;
  private ConfigMapChunkStore store;

  @BeforeEach
  void start() {
    api = new ApiServerDispatcher();
    server =
        new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), api, false);
    server.init();
    client = server.createClient();
    store =
        ConfigMapChunkStore.writer(
            client, NS, FILTER, OWNER, Map.of("bloomoperator.io/writer", "pod-a"));
  }

  @AfterEach
  void stop() {
    client.close();
    server.destroy();
  }

  private static OwnerReference owner(String uid, Boolean controller) {
    return new OwnerReferenceBuilder()
        .withApiVersion("bloomoperator.io/v1alpha1")
        .withKind("BloomFilter")
        .withName(FILTER)
        .withUid(uid)
        .withController(controller)
        .build();
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private Stored create(Part part, int index, String content) throws IOException {
    byte[] data = bytes(content);
    return store.create(part, index, data, data.length, Sha256.hex(data, 0, data.length));
  }

  private ConfigMap get(String name) {
    return client.configMaps().inNamespace(NS).withName(name).get();
  }

  private List<String> names() {
    return client.configMaps().inNamespace(NS).list().getItems().stream()
        .map(c -> c.getMetadata().getName())
        .sorted()
        .toList();
  }

  /** A chunk ConfigMap made by someone else: labelled like this filter's, owned as given. */
  private void lookAlike(String name, Map<String, String> labels, OwnerReference... owners) {
    client
        .configMaps()
        .inNamespace(NS)
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName(name)
                .withLabels(labels)
                .withOwnerReferences(owners)
                .endMetadata()
                .withData(Map.of("chunk", "not mine"))
                .build())
        .create();
  }

  // ---------------------------------------------------------------- create and read

  @Test
  void createsAnImmutableOwnedLabelledChunkOfExactlyTheGivenBytes() throws IOException {
    byte[] data = bytes("0123456789");
    Stored stored = store.create(Part.base(7), 2, data, 6, Sha256.hex(data, 0, data.length));

    String name = SnapshotNames.chunkName(FILTER, 7, 2);
    assertThat(store.name(Part.base(7), 2)).isEqualTo(name);
    ConfigMap chunk = get(name);
    assertThat(stored.name()).isEqualTo(name);
    assertThat(stored.part()).isEqualTo(Part.base(7));
    assertThat(stored.revision()).isNotNull().isEqualTo(chunk.getMetadata().getResourceVersion());
    assertThat(chunk.getImmutable()).isTrue();
    assertThat(chunk.getMetadata().getLabels())
        .containsExactlyInAnyOrderEntriesOf(SnapshotNames.chunkLabels(FILTER, 7));
    assertThat(chunk.getMetadata().getOwnerReferences()).containsExactly(OWNER);
    assertThat(chunk.getMetadata().getAnnotations())
        .containsExactlyEntriesOf(Map.of("bloomoperator.io/writer", "pod-a"));
    assertThat(Base64.getDecoder().decode(chunk.getBinaryData().get(SnapshotNames.CHUNK_DATA_KEY)))
        .isEqualTo(bytes("012345"));
  }

  @Test
  void deltaChunksHaveTheirOwnNamesAndLabels() throws IOException {
    Stored base = create(Part.base(3), 0, "base");
    Stored delta = create(Part.delta(3), 0, "delta");

    assertThat(base.name()).isEqualTo(SnapshotNames.chunkName(FILTER, 3, 0));
    assertThat(delta.name()).isEqualTo(SnapshotNames.deltaChunkName(FILTER, 3, 0));
    assertThat(store.name(Part.delta(3), 0)).isEqualTo(delta.name());
    assertThat(delta.part()).isEqualTo(Part.delta(3));
    assertThat(get(delta.name()).getMetadata().getLabels())
        .containsExactlyInAnyOrderEntriesOf(SnapshotNames.deltaChunkLabels(FILTER, 3));
  }

  @Test
  void withoutAnnotationsAChunkHasNone() throws IOException {
    store = ConfigMapChunkStore.writer(client, NS, FILTER, OWNER, Map.of());
    Stored stored = create(Part.base(1), 0, "x");
    assertThat(get(stored.name()).getMetadata().getAnnotations()).isNullOrEmpty();
  }

  @Test
  void aTakenNameIsReportedAndLeftAlone() throws IOException {
    String name = SnapshotNames.chunkName(FILTER, 1, 0);
    lookAlike(name, Map.of(), owner("uid-other", true));

    assertThatThrownBy(() -> create(Part.base(1), 0, "mine"))
        .isInstanceOfSatisfying(
            NameTakenException.class, e -> assertThat(e.name()).isEqualTo(name));
    assertThat(get(name).getData()).containsEntry("chunk", "not mine");
  }

  @Test
  void otherCreateFailuresAreNotTakenForATakenName() {
    api.failNext("POST", CONFIGMAPS, 403);
    assertThatThrownBy(() -> create(Part.base(1), 0, "x"))
        .isInstanceOf(KubernetesClientException.class)
        .isNotInstanceOf(NameTakenException.class)
        .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(403));
  }

  @Test
  void whatAWriterCreatesAReaderDecodes() throws Exception {
    BloomFilterBits.Builder builder = BloomFilterBits.builder(KeyType.STRING, 64 * 300, 3);
    for (int i = 0; i < 500; i++) {
      builder.putString("k" + i);
    }
    BloomFilterBits bits = builder.build();
    SnapshotEncoder.Result encoded =
        SnapshotEncoder.encode(
            bits,
            997,
            (index, data, length, sha) -> store.create(Part.base(4), index, data, length, sha));
    Manifest manifest = Manifest.of(FILTER, 4, bits, 500, encoded, Instant.now());
    assertThat(manifest.chunks()).hasSizeGreaterThan(2);

    ConfigMapChunkStore reader = ConfigMapChunkStore.reader(client, NS);
    BloomFilterBits decoded = SnapshotDecoder.decode(manifest, reader);

    assertThat(SnapshotEncoder.sha256(decoded)).isEqualTo(SnapshotEncoder.sha256(bits));
    Manifest.ChunkRef first = manifest.chunks().get(0);
    assertThat(reader.load(0, first)).hasSize(first.bytes());
  }

  @Test
  void aMissingChunkLoadsAsNullAndAChunkOfAnotherSizeFails() throws IOException {
    Stored stored = create(Part.base(2), 0, "12345");
    ConfigMapChunkStore reader = ConfigMapChunkStore.reader(client, NS);
    String sha = "00".repeat(32);

    assertThat(reader.load(0, new Manifest.ChunkRef(stored.name(), 5, sha)))
        .isEqualTo(bytes("12345"));
    assertThat(reader.load(1, new Manifest.ChunkRef(SnapshotNames.chunkName(FILTER, 2, 1), 5, sha)))
        .isNull();
    assertThatThrownBy(() -> reader.load(0, new Manifest.ChunkRef(stored.name(), 9, sha)))
        .isInstanceOf(IOException.class);
  }

  @Test
  void aReaderWritesNothing() {
    ConfigMapChunkStore reader = ConfigMapChunkStore.reader(client, NS);
    assertThatThrownBy(() -> reader.name(Part.base(1), 0))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> reader.create(Part.base(1), 0, bytes("x"), 1, "00".repeat(32)))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> reader.deleteExcept(Set.of()))
        .isInstanceOf(IllegalStateException.class);
    assertThat(names()).isEmpty();
  }

  // ---------------------------------------------------------------- list

  @Test
  void listsEveryChunkItOwnsPageByPage() throws IOException {
    Stored b1 = create(Part.base(1), 0, "a");
    Stored b2 = create(Part.base(1), 1, "b");
    Stored b3 = create(Part.base(2), 0, "c");
    Stored d1 = create(Part.delta(2), 0, "d");
    Stored d2 = create(Part.delta(2), 1, "e");

    assertThat(store.list()).containsExactlyInAnyOrder(b1, b2, b3, d1, d2);
    // Pages of two (each chunk holds up to 1 MiB), and more than one page was needed.
    assertThat(api.pageSizes).allMatch(n -> n <= 2).hasSizeGreaterThanOrEqualTo(3);
  }

  @Test
  void listsNeitherStrangersNorOtherFiltersNorManifests() throws IOException {
    Stored mine = create(Part.base(1), 0, "a");
    Map<String, String> labels = SnapshotNames.chunkLabels(FILTER, 1);
    lookAlike("stranger-1", labels, owner("uid-other", true));
    lookAlike("stranger-2", labels, owner("uid-1", false)); // owner, but not the controller
    lookAlike("stranger-3", labels, owner("uid-1", null));
    lookAlike("stranger-4", labels);
    lookAlike("other-filter", SnapshotNames.chunkLabels("other", 1), OWNER);
    lookAlike("manifest", SnapshotNames.manifestLabels(FILTER), OWNER);

    assertThat(store.list()).containsExactly(mine);
  }

  @Test
  void anOwnerWithoutUidOwnsNothing() throws IOException {
    lookAlike("chunk", SnapshotNames.chunkLabels(FILTER, 1), owner(null, true));
    store = ConfigMapChunkStore.writer(client, NS, FILTER, owner(null, true), Map.of());
    assertThat(store.list()).isEmpty();
  }

  @Test
  void ownedChunksWithoutAVersionInTheRangeAreNotListed() throws IOException {
    Stored mine = create(Part.base(1), 0, "a");
    Map<String, String> noVersion = new HashMap<>(SnapshotNames.chunkLabels(FILTER, 1));
    noVersion.remove(SnapshotNames.LABEL_VERSION);
    lookAlike("no-version", noVersion, OWNER);
    for (String version : new String[] {"x", "0", "-1", "+2", "01", "1000000000000000000"}) {
      Map<String, String> labels = new HashMap<>(noVersion);
      labels.put(SnapshotNames.LABEL_VERSION, version);
      lookAlike("bad-version-" + version.replaceAll("[^0-9a-z]", "s"), labels, OWNER);
    }
    assertThat(store.list()).containsExactly(mine);
  }

  // ---------------------------------------------------------------- delete

  @Test
  void deletesAChunkAsItWasCreated() throws IOException {
    Stored stored = create(Part.base(1), 0, "a");
    assertThat(store.delete(stored)).isTrue();
    assertThat(get(stored.name())).isNull();
  }

  @Test
  void aChunkReplacedSinceItWasListedStays() throws IOException {
    Stored stored = create(Part.base(1), 0, "a");
    Stored old = new Stored(stored.name(), stored.part(), "1" + stored.revision());
    assertThat(store.delete(old)).isFalse();
    assertThat(get(stored.name())).isNotNull();
  }

  @Test
  void withoutARevisionOnlyAnOwnedChunkIsDeleted() throws IOException {
    Stored stored = create(Part.base(1), 0, "a");
    String strangers = SnapshotNames.chunkName(FILTER, 1, 1);
    lookAlike(strangers, SnapshotNames.chunkLabels(FILTER, 1), owner("uid-other", true));

    assertThat(store.delete(new Stored(stored.name(), stored.part(), null))).isTrue();
    assertThat(store.delete(new Stored(strangers, Part.base(1), null))).isTrue();
    assertThat(store.delete(new Stored("gone", Part.base(1), null))).isTrue();

    assertThat(names()).containsExactly(strangers);
  }

  @Test
  void aFailedDeleteIsReportedAndTheChunkStays() throws IOException {
    Stored stored = create(Part.base(1), 0, "a");
    api.failNext("DELETE", CONFIGMAPS, 403);
    assertThat(store.delete(stored)).isFalse();
    api.failNext("GET", CONFIGMAPS + "/" + stored.name(), 403);
    assertThat(store.delete(new Stored(stored.name(), stored.part(), null))).isFalse();
    assertThat(get(stored.name())).isNotNull();
  }

  // ---------------------------------------------------------------- deleteExcept

  /** Two chunks of each of base 1, 2, 3 and delta 2, 3; a stranger's look-alike of base 1. */
  private void fiveParts() throws IOException {
    for (long v = 1; v <= 3; v++) {
      for (int i = 0; i < 2; i++) {
        create(Part.base(v), i, "b" + v + i);
        if (v > 1) {
          create(Part.delta(v), i, "d" + v + i);
        }
      }
    }
    lookAlike("stranger", SnapshotNames.chunkLabels(FILTER, 1), owner("uid-other", true));
  }

  private List<Part> remainingParts() throws IOException {
    return store.list().stream()
        .map(Stored::part)
        .distinct()
        .sorted((a, b) -> (a.role() + "" + a.version()).compareTo(b.role() + "" + b.version()))
        .toList();
  }

  @Test
  void deleteExceptKeepsExactlyTheKeptParts() throws IOException {
    fiveParts();
    store.deleteExcept(Set.of(Part.base(2), Part.delta(3)));

    assertThat(remainingParts()).containsExactly(Part.base(2), Part.delta(3));
    assertThat(store.list()).hasSize(4);
    assertThat(names()).contains("stranger");
  }

  @Test
  void keepingOnlyDeltasDeletesEveryBaseAndKeepingOnlyBasesEveryDelta() throws IOException {
    fiveParts();
    store.deleteExcept(Set.of(Part.delta(2), Part.delta(3)));
    assertThat(remainingParts()).containsExactly(Part.delta(2), Part.delta(3));

    store.deleteExcept(Set.of(Part.base(3)));
    assertThat(remainingParts()).isEmpty();
    assertThat(names()).containsExactly("stranger");
  }

  @Test
  void keepingNothingDeletesEveryOwnedChunkAndNothingElse() throws IOException {
    fiveParts();
    lookAlike("manifest", SnapshotNames.manifestLabels(FILTER), OWNER);
    store.deleteExcept(Set.of());
    assertThat(names()).containsExactly("manifest", "stranger");
  }

  @Test
  void thePublishedManifestChangesNothingForConfigMaps() throws Exception {
    fiveParts();
    InMemoryChunks chunks = new InMemoryChunks();
    BloomFilterBits bits = BloomFilterBits.builder(KeyType.STRING, 64 * 8, 3).build();
    Manifest published = chunks.publishFull(bits, 0, 3);
    store.deleteExcept(Set.of(Part.base(3)), published);
    assertThat(remainingParts()).containsExactly(Part.base(3));
  }

  @Test
  void chunksGoneOrReplacedMeanwhileAreSkippedOtherFailuresReported() throws IOException {
    fiveParts();
    String first = SnapshotNames.chunkName(FILTER, 1, 0);
    api.failNext("DELETE", CONFIGMAPS + "/" + first, 404);
    api.failNext("DELETE", CONFIGMAPS + "/" + SnapshotNames.chunkName(FILTER, 1, 1), 409);
    store.deleteExcept(Set.of(Part.base(2), Part.base(3), Part.delta(2), Part.delta(3)));
    // The two deletes were answered "gone" and "replaced": the chunks stay, the call goes on.
    assertThat(remainingParts()).contains(Part.base(1));

    api.failNext("DELETE", CONFIGMAPS + "/" + first, 403);
    assertThatThrownBy(
            () ->
                store.deleteExcept(
                    Set.of(Part.base(2), Part.base(3), Part.delta(2), Part.delta(3))))
        .isInstanceOfSatisfying(
            KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(403));
    assertThat(get(first)).isNotNull();
  }

  // ---------------------------------------------------------------- parts

  private static BloomFilterBits bits(String... keys) {
    BloomFilterBits.Builder builder = BloomFilterBits.builder(KeyType.STRING, 64 * 64, 3);
    for (String key : keys) {
      builder.putString(key);
    }
    return builder.build();
  }

  @Test
  void thePartsOfAManifestAreItsBaseAndEachDelta() throws Exception {
    InMemoryChunks chunks = new InMemoryChunks();
    Manifest v3 = chunks.publishFull(bits("a"), 1, 3);
    Manifest v4 = chunks.publishDelta(v3, bits("a", "b"), 2, 4);
    Manifest v5 = chunks.publishDelta(v4, bits("a", "b", "c"), 3, 5);

    assertThat(Part.of(v3)).containsExactly(Part.base(3));
    assertThat(Part.of(v5)).containsExactly(Part.base(3), Part.delta(4), Part.delta(5));
    assertThat(Part.base(3).role()).isEqualTo(ChunkStore.Role.BASE);
    assertThat(Part.delta(3).role()).isEqualTo(ChunkStore.Role.DELTA);
  }
}
