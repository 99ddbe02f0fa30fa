package io.bloomoperator.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a publish does when the manifest write reports failure (fabric8 mock server: the point is
 * the failure injection, which a real API server does not offer). A write that was committed anyway
 * must keep its chunks; one that really failed must remove them.
 */
class SnapshotStoreTest {

  private static final String NS = "shop";
  private static final String FILTER = "ids";
  private static final Instant NOW = Instant.parse("2026-11-29T12:00:00Z");

  /** What the server answers for every chunk created. */
  private static final String CHUNK_RESOURCE_VERSION = "31";

  private KubernetesMockServer server;
  private KubernetesClient client;
  private BloomFilter owner;
  private BloomFilterBits bits;

  @BeforeEach
  void setUp() {
    server = new KubernetesMockServer(false);
    server.init();
    client = server.createClient();
    owner = new BloomFilter();
    owner.getMetadata().setName(FILTER);
    owner.getMetadata().setNamespace(NS);
    owner.getMetadata().setUid("uid-1");
    // 1,030 bytes: 2 chunks of 1024
    BloomFilterBits.Builder builder = BloomFilterBits.builder(KeyType.STRING, 64 * 128, 3);
    for (int i = 0; i < 100; i++) {
      builder.putString("k" + i);
    }
    bits = builder.build();
    server
        .expect()
        .post()
        .withPath("/api/v1/namespaces/" + NS + "/configmaps")
        .andReturn(
            201,
            new io.fabric8.kubernetes.api.model.ConfigMapBuilder()
                .withNewMetadata()
                .withResourceVersion(CHUNK_RESOURCE_VERSION)
                .endMetadata()
                .build())
        .always();
    server
        .expect()
        .delete()
        .withPath(
            "/api/v1/namespaces/" + NS + "/configmaps/" + SnapshotNames.chunkName(FILTER, 2, 0))
        .andReturn(200, new ConfigMap())
        .always();
    server
        .expect()
        .delete()
        .withPath(
            "/api/v1/namespaces/" + NS + "/configmaps/" + SnapshotNames.chunkName(FILTER, 2, 1))
        .andReturn(200, new ConfigMap())
        .always();
    // The update of the manifest answers 409, as the client's retry of a committed write does.
    server.expect().put().withPath(manifestPath()).andReturn(409, null).always();
  }

  @AfterEach
  void tearDown() {
    client.close();
    server.destroy();
  }

  @Test
  void manifestWriteReportedAsFailedButCommittedKeepsTheChunks() throws Exception {
    Manifest committed = Manifest.of(FILTER, 2, bits, 100, encode(), NOW);
    server
        .expect()
        .get()
        .withPath(manifestPath())
        .andReturn(200, manifestMap(committed, "7"))
        .always();

    Manifest published =
        new SnapshotStore(client, owner, null)
            .publish(bits, 100, 2, 1024, current(), new BuildRecord("t", 1, NOW), NOW);

    assertThat(published.version()).isEqualTo(2);
    assertThat(published.chunks()).hasSize(2);
    assertThat(methods()).contains("PUT").doesNotContain("DELETE");
  }

  @Test
  void manifestWriteThatReallyFailedRemovesTheChunksAndReportsAConflict() throws Exception {
    Manifest v1 = Manifest.of(FILTER, 1, bits, 99, encode(), NOW);
    server.expect().get().withPath(manifestPath()).andReturn(200, manifestMap(v1, "8")).always();

    assertThatThrownBy(this::publishVersion2)
        .isInstanceOfSatisfying(
            PublishException.class,
            e -> assertThat(e.reason()).isEqualTo(Reasons.MANIFEST_CONFLICT));
    assertThat(methods()).filteredOn("DELETE"::equals).hasSize(2);
  }

  /**
   * Found by the fault suite (leader-pause): an operator frozen in the middle of a publish that
   * wakes up after another replica took over finds its chunk names taken (the new leader's janitor
   * removed its chunks and the new leader created the same names for the same version). Its
   * clean-up must not delete those by name: they are chunks of the published version. Every delete
   * carries the resourceVersion of the chunk this publish created (chunks never change, so it
   * identifies exactly that object) and fails with 409 on anyone else's.
   */
  @Test
  void cleanupDeletesOnlyTheChunksThisPublishCreated() throws Exception {
    Manifest v1 = Manifest.of(FILTER, 1, bits, 99, encode(), NOW);
    server.expect().get().withPath(manifestPath()).andReturn(200, manifestMap(v1, "8")).always();

    assertThatThrownBy(this::publishVersion2).isInstanceOf(PublishException.class);
    List<String> deleteBodies = new ArrayList<>();
    int count = server.getRequestCount();
    for (int i = 0; i < count; i++) {
      RecordedRequest request = server.takeRequest();
      if (request.getMethod().equals("DELETE")) {
        deleteBodies.add(request.getBody().readUtf8());
      }
    }
    assertThat(deleteBodies)
        .hasSize(2)
        .allSatisfy(
            body ->
                assertThat(body)
                    .contains("\"preconditions\"")
                    .contains("\"resourceVersion\":\"" + CHUNK_RESOURCE_VERSION + "\""));
  }

  private Manifest publishVersion2() throws Exception {
    return new SnapshotStore(client, owner, null)
        .publish(bits, 100, 2, 1024, current(), new BuildRecord("t", 1, NOW), NOW);
  }

  private SnapshotEncoder.Result encode() throws Exception {
    return SnapshotEncoder.encode(bits, 1024, (index, data, length, sha) -> {});
  }

  private PublishedSnapshot current() throws Exception {
    Manifest v1 = Manifest.of(FILTER, 1, bits, 99, encode(), NOW);
    return new PublishedSnapshot(manifestMap(v1, "5"), v1);
  }

  private static ConfigMap manifestMap(Manifest manifest, String resourceVersion) {
    ConfigMap configMap = SnapshotConfigMaps.manifest(NS, manifest, null, null);
    configMap.getMetadata().setResourceVersion(resourceVersion);
    configMap
        .getMetadata()
        .setOwnerReferences(
            List.of(
                new OwnerReferenceBuilder()
                    .withApiVersion("bloomoperator.io/v1alpha1")
                    .withKind("BloomFilter")
                    .withName(FILTER)
                    .withUid("uid-1")
                    .withController(true)
                    .build()));
    return configMap;
  }

  private static String manifestPath() {
    return "/api/v1/namespaces/" + NS + "/configmaps/" + SnapshotNames.manifestName(FILTER);
  }

  private List<String> methods() throws InterruptedException {
    List<String> methods = new ArrayList<>();
    int count = server.getRequestCount();
    for (int i = 0; i < count; i++) {
      RecordedRequest request = server.takeRequest();
      methods.add(request.getMethod());
    }
    return methods;
  }
}
