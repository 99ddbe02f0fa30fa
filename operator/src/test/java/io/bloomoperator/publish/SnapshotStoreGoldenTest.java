package io.bloomoperator.publish;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Pins, object for object, what {@link SnapshotStore} sends to the API server for a fixed input:
 * every chunk and manifest ConfigMap (name, labels, annotations, immutable, data, binaryData,
 * ownerReference) and so the payload bytes. Readers in other languages parse these objects, so a
 * refactoring of how they are built must not change a byte of them.
 *
 * <p>The expected objects are in {@code src/test/resources/golden/snapshot}; run with {@code
 * -Dgolden.update=true} to rewrite them, only when the protocol is meant to change. Objects are
 * compared as JSON with object keys sorted (label and annotation maps have no order on the wire);
 * the value of {@code superseded-at}, taken from the clock, is checked to lie within the call and
 * then replaced by a placeholder.
 */
class SnapshotStoreGoldenTest {

  private static final String NS = "shop";
  private static final String FILTER = "product-ids";
  private static final String UID = "6f1c0d0e-0000-4000-8000-000000000001";
  private static final Instant CREATED_AT = Instant.parse("2026-11-29T12:00:00Z");
  private static final Instant BUILT_AT = Instant.parse("2026-11-29T12:00:05Z");
  private static final double FPP = 0.01;
  private static final int KEYS = 2000;
  private static final int CHUNK_SIZE = 1024;
  private static final String KEY_SECRET = "bloom-signing";
  private static final String KEY_NAMESPACE = "bloom-operator";
  private static final String SUPERSEDED_AT = "bloomoperator.io/superseded-at";
  private static final Path GOLDEN_DIR = Path.of("src/test/resources/golden/snapshot");
  private static final ObjectMapper JSON =
      JsonMapper.builder()
          .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
          .enable(SerializationFeature.INDENT_OUTPUT)
          .build();

  private KubernetesMockServer server;
  private KubernetesClient client;
  private BloomFilter owner;

  @BeforeEach
  void setUp() throws IOException {
    server = new KubernetesMockServer(false);
    server.init();
    client = server.createClient();
    owner = new BloomFilter();
    owner.getMetadata().setName(FILTER);
    owner.getMetadata().setNamespace(NS);
    owner.getMetadata().setUid(UID);
    String pem = resource("signing-key.pem");
    server
        .expect()
        .get()
        .withPath("/api/v1/namespaces/" + KEY_NAMESPACE + "/secrets/" + KEY_SECRET)
        .andReturn(
            200,
            new SecretBuilder()
                .withNewMetadata()
                .withName(KEY_SECRET)
                .withNamespace(KEY_NAMESPACE)
                .endMetadata()
                .withData(
                    Map.of(
                        SigningKeySecret.KEY,
                        Base64.getEncoder()
                            .encodeToString(pem.getBytes(StandardCharsets.US_ASCII))))
                .build())
        .always();
    server
        .expect()
        .post()
        .withPath("/api/v1/namespaces/" + NS + "/configmaps")
        .andReturn(201, new ConfigMap())
        .always();
    server
        .expect()
        .put()
        .withPath("/api/v1/namespaces/" + NS + "/configmaps/" + SnapshotNames.manifestName(FILTER))
        .andReturn(200, new ConfigMap())
        .always();
  }

  @AfterEach
  void tearDown() {
    client.close();
    server.destroy();
  }

  @Test
  void firstStringVersionUnsigned() throws Exception {
    store(false).publish(stringBits(), KEYS, 1, CHUNK_SIZE, null, build("token-a", 3), CREATED_AT);

    assertGolden("strings-v1-unsigned.json");
  }

  @Test
  void firstStringVersionSigned() throws Exception {
    store(true).publish(stringBits(), KEYS, 1, CHUNK_SIZE, null, build("token-a", 3), CREATED_AT);

    assertGolden("strings-v1-signed.json");
  }

  @Test
  void nextLongVersionUnsigned() throws Exception {
    store(false)
        .publish(longBits(), KEYS, 3, CHUNK_SIZE, publishedLongs(), build(null, 4), CREATED_AT);

    assertGolden("longs-v3-unsigned.json");
  }

  @Test
  void nextLongVersionSigned() throws Exception {
    store(true)
        .publish(
            longBits(), KEYS, 3, CHUNK_SIZE, publishedLongs(), build("token-b", 4), CREATED_AT);

    assertGolden("longs-v3-signed.json");
  }

  @Test
  void confirmationMovesTheBuildRecordOnly() throws Exception {
    PublishedSnapshot published = publishedLongs();
    store(false)
        .apply(
            PublishPlan.confirm(published.manifest(), CHUNK_SIZE),
            published,
            null,
            build("token-c", 5));

    assertGolden("longs-v2-confirmed.json");
  }

  @Test
  void confirmationWithAKeyResignsAnUnsignedManifest() throws Exception {
    PublishedSnapshot published = publishedLongs();
    store(true)
        .apply(
            PublishPlan.confirm(published.manifest(), CHUNK_SIZE),
            published,
            new SnapshotStore.Payload(longBits(), KEYS, null),
            build("token-c", 5));

    assertGolden("longs-v2-confirmed-signed.json");
  }

  private SnapshotStore store(boolean signed) {
    return new SnapshotStore(
        client, owner, signed ? new SigningKeySecret(KEY_NAMESPACE, KEY_SECRET) : null);
  }

  private static BuildRecord build(String token, long generation) {
    return new BuildRecord(token, generation, BUILT_AT);
  }

  private static BloomFilterBits stringBits() {
    BloomFilterBits.Builder bits =
        BloomFilterBits.builder(KeyType.STRING, BloomFilterSizing.forKeys(KEYS, FPP));
    for (int i = 0; i < KEYS; i++) {
      bits.putString("sku-" + i);
    }
    return bits.build();
  }

  private static BloomFilterBits longBits() {
    BloomFilterBits.Builder bits =
        BloomFilterBits.builder(KeyType.LONG, BloomFilterSizing.forKeys(KEYS, FPP));
    for (int i = 0; i < KEYS; i++) {
      bits.putLong(i * 7919L - 1_000_000L);
    }
    return bits.build();
  }

  /**
   * Version 2 of the long filter as the API server returns it: what the operator wrote (unsigned,
   * with a build record) plus the resourceVersion that guards the next update.
   */
  private PublishedSnapshot publishedLongs() throws IOException {
    BloomFilterBits bits = longBits();
    Manifest manifest =
        Manifest.of(
            FILTER,
            2,
            bits,
            KEYS,
            SnapshotEncoder.encode(bits, CHUNK_SIZE, (index, data, length, sha256) -> {}),
            CREATED_AT.minusSeconds(3600));
    Map<String, String> annotations = new HashMap<>();
    SnapshotConfigMaps.putBuildRecord(
        annotations, "token-old", 2, Instant.parse("2026-11-29T11:00:04Z"));
    ConfigMap configMap = SnapshotConfigMaps.manifest(NS, manifest, null, annotations);
    configMap.getMetadata().setResourceVersion("41");
    configMap
        .getMetadata()
        .setOwnerReferences(
            List.of(
                new OwnerReferenceBuilder()
                    .withApiVersion(owner.getApiVersion())
                    .withKind(owner.getKind())
                    .withName(FILTER)
                    .withUid(UID)
                    .withController(true)
                    .withBlockOwnerDeletion(false)
                    .build()));
    return new PublishedSnapshot(configMap, manifest);
  }

  /** Every write the store sent, in order, against the golden file {@code name}. */
  private void assertGolden(String name) throws Exception {
    Instant after = Instant.now();
    List<Map<String, Object>> writes = new ArrayList<>();
    int count = server.getRequestCount();
    for (int i = 0; i < count; i++) {
      RecordedRequest request = server.takeRequest();
      if (request.getMethod().equals("GET")) {
        continue; // the signing key Secret
      }
      Map<String, Object> write = new LinkedHashMap<>();
      write.put("method", request.getMethod());
      write.put("path", request.getPath());
      @SuppressWarnings("unchecked")
      Map<String, Object> body = JSON.readValue(request.getBody().readUtf8(), Map.class);
      maskSupersededAt(body, after);
      write.put("body", body);
      writes.add(write);
    }
    String actual = JSON.writeValueAsString(writes) + "\n";
    if (Boolean.getBoolean("golden.update")) {
      Files.writeString(GOLDEN_DIR.resolve(name), actual);
    }
    assertThat(actual).isEqualTo(Files.readString(GOLDEN_DIR.resolve(name)));
  }

  @SuppressWarnings("unchecked")
  private static void maskSupersededAt(Map<String, Object> body, Instant after) {
    Map<String, Object> metadata = (Map<String, Object>) body.get("metadata");
    Map<String, Object> annotations = (Map<String, Object>) metadata.get("annotations");
    if (annotations != null && annotations.containsKey(SUPERSEDED_AT)) {
      Instant at = Instant.parse((String) annotations.get(SUPERSEDED_AT));
      assertThat(at).isBetween(after.minusSeconds(60), after);
      annotations.put(SUPERSEDED_AT, "<now>");
    }
  }

  private static String resource(String name) throws IOException {
    try (InputStream in =
        SnapshotStoreGoldenTest.class.getResourceAsStream("/golden/snapshot/" + name)) {
      assertThat(in).as("golden file %s", name).isNotNull();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
