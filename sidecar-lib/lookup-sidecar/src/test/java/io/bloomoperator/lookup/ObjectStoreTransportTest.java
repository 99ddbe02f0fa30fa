package io.bloomoperator.lookup;

import static io.bloomoperator.lookup.LookupClient.present;
import static io.bloomoperator.lookup.LookupClient.presentAll;
import static io.bloomoperator.lookup.LookupClient.version;
import static io.bloomoperator.lookup.LookupSidecarTest.config;
import static io.bloomoperator.lookup.LookupSidecarTest.keys;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.StoreObjectKeys;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.bloomoperator.watch.SnapshotPublisher;
import io.bloomoperator.watch.TestKeys;
import io.bloomoperator.watch.s3.S3ObjectStore;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * The sidecar reading snapshots whose chunks are in an object store, on a real S3 server
 * (versitygw) and a real API server: the manifest ConfigMap names only the store, the sidecar's
 * {@code --object-store} flag says where it is and where the read credentials' files are (as
 * sidecar-lib's {@code S3ObjectStore} takes them), and every chunk is verified before a version is
 * served.
 */
@RealKubernetes
class ObjectStoreTransportTest {

  private static final String STORE = "primary";
  private static final String PREFIX = "bloom";
  private static final int CHUNK_SIZE = 1_000_000;
  private static final Duration READY = Duration.ofSeconds(30);

  @Test
  void servesStoreSnapshotsAsTheInProcessReaderAndRefusesATamperedChunk(
      KubernetesClient client, TestNamespace ns, @TempDir Path secrets) throws Exception {
    List<String> v1 = keys("v1", 4_000);
    List<String> v2 = keys("v2", 4_000);
    List<String> probes = new ArrayList<>(v1);
    probes.addAll(v2);
    probes.addAll(keys("absent", 2_000));
    // What the sidecar logs (slf4j-simple writes to System.err), kept to look for credentials.
    java.io.ByteArrayOutputStream logged = new java.io.ByteArrayOutputStream();
    java.io.PrintStream stderr = System.err;
    System.setErr(
        new java.io.PrintStream(
            new java.io.OutputStream() {
              @Override
              public void write(int b) {
                stderr.write(b);
                logged.write(b);
              }

              @Override
              public void write(byte[] b, int off, int len) {
                stderr.write(b, off, len);
                logged.write(b, off, len);
              }
            },
            true));
    try (VersityGw server = VersityGw.start();
        S3Client root = server.client()) {
      String bucket = "lookup-" + Long.toHexString(System.nanoTime());
      root.createBucket(b -> b.bucket(bucket));
      // The credentials as a pod has them: the keys of a mounted Secret, one file each.
      Path idFile = Files.writeString(secrets.resolve("access-key-id"), server.accessKey() + "\n");
      Path secretFile =
          Files.writeString(secrets.resolve("secret-access-key"), server.secretKey() + "\n");
      SnapshotPublisher manifests = new SnapshotPublisher(client, ns.name(), "ids");
      // Over 1 MB: two chunks, so the tampered one below is not the first.
      BloomFilterBits bits1 = TestKeys.stringFilter(1_500_000, v1);
      Manifest m1 = upload(root, bucket, ns.name(), bits1, v1.size(), 1, -1);
      assertThat(m1.chunks()).hasSizeGreaterThan(1);
      manifests.writeManifestJson(m1.toJson());

      String storeFlag =
          STORE
              + ",endpoint="
              + server.endpoint()
              + ",bucket="
              + bucket
              + ",prefix="
              + PREFIX
              + ",region="
              + VersityGw.REGION
              + ",access-key-id-file="
              + idFile
              + ",secret-access-key-file="
              + secretFile;
      try (LookupSidecar sidecar =
              LookupSidecar.start(
                  config("--filter", ns.name() + "/ids:String", "--object-store", storeFlag),
                  client,
                  Map.of());
          S3ObjectStore store =
              S3ObjectStore.builder()
                  .endpoint(server.endpoint())
                  .bucket(bucket)
                  .prefix(PREFIX)
                  .region(VersityGw.REGION)
                  .accessKeyFiles(idFile, secretFile)
                  .build();
          LiveBloomFilter<String> inProcess =
              BloomFilterWatcher.builder(client, ns.name(), "ids", LiveKeyType.STRING)
                  .objectStore(STORE, store)
                  .readerReports(false)
                  .start()) {
        LookupClient http = new LookupClient(sidecar.address());
        await().atMost(READY).until(() -> http.get("/readyz").statusCode() == 200);
        assertThat(inProcess.awaitReady(READY)).isTrue();
        boolean[] expected = new boolean[probes.size()];
        inProcess.mightContainAll(probes.toArray(String[]::new), 0, probes.size(), expected);
        HttpResponse<String> batch =
            http.post("/v1/filters/ids/contains", "text/plain", String.join("\n", probes));
        assertThat(version(batch)).isEqualTo(1);
        assertThat(presentAll(batch)).isEqualTo(expected);
        for (int i = 0; i < probes.size(); i += 101) {
          assertThat(present(http.contains("ids", probes.get(i)))).isEqualTo(expected[i]);
        }

        // v2 with its second chunk changed in the store after upload (the manifest keeps the
        // digest of what was published): refused, v1 still served, the reason counted.
        LiveBloomFilter<?> served = sidecar.filters().get(0);
        long failuresBefore = served.failures(LoadFailureReason.VERIFICATION);
        Manifest m2 =
            upload(root, bucket, ns.name(), TestKeys.stringFilter(1_500_000, v2), v2.size(), 2, 1);
        manifests.writeManifestJson(m2.toJson());
        await()
            .atMost(READY)
            .until(() -> served.failures(LoadFailureReason.VERIFICATION) > failuresBefore);
        HttpResponse<String> after =
            http.post("/v1/filters/ids/contains", "text/plain", String.join("\n", probes));
        assertThat(version(after)).isEqualTo(1);
        assertThat(presentAll(after)).isEqualTo(expected);
        assertThat(served.currentVersion()).isEqualTo(1);

        // The store's bytes and the credentials appear in no answer.
        String everything =
            http.get("/metrics").body()
                + http.get("/v1/filters").body()
                + http.get("/readyz").body();
        assertThat(everything)
            .doesNotContain(server.secretKey())
            .doesNotContain(server.accessKey())
            .doesNotContain(bucket);
        assertThat(served.lastFailure().map(Object::toString).orElse(""))
            .doesNotContain(server.secretKey())
            .doesNotContain(server.accessKey());
      }
      assertThat(logged.toString(java.nio.charset.StandardCharsets.UTF_8))
          .contains("could not load v2") // the refusal was logged, and with it no credential
          .doesNotContain(server.secretKey())
          .doesNotContain(server.accessKey());
    } finally {
      System.setErr(stderr);
    }
  }

  @Test
  void aManifestNamingAStoreTheSidecarWasNotGivenIsRefused(
      KubernetesClient client, TestNamespace ns) throws Exception {
    BloomFilterBits bits = TestKeys.stringFilter(1_000, keys("k", 100));
    Manifest manifest = encode(bits, 100, 1, -1, new ArrayList<>());
    new SnapshotPublisher(client, ns.name(), "ids").writeManifestJson(manifest.toJson());
    try (LookupSidecar sidecar =
        LookupSidecar.start(
            config("--filter", ns.name() + "/ids:String:fail-closed"), client, Map.of())) {
      LiveBloomFilter<?> filter = sidecar.filters().get(0);
      await().atMost(READY).until(() -> filter.failures(LoadFailureReason.UNKNOWN_STORE) > 0);
      assertThat(new LookupClient(sidecar.address()).contains("ids", "k-1").statusCode())
          .isEqualTo(503);
    }
  }

  @Test
  void storeSpecsAreBoundedAndCarryNoCredentials() {
    String base = "primary,endpoint=https://s3.example.com,bucket=bloom-snapshots";
    ObjectStoreSpec spec =
        config("--filter", "a/b", "--object-store", base + ",region=eu-west-1,parallelism=8")
            .objectStores()
            .get(0);
    assertThat(spec.name()).isEqualTo("primary");
    assertThat(spec.region()).hasValue("eu-west-1");
    assertThat(spec.parallelism()).hasValue(8);
    assertThat(spec.accessKeyIdFile()).isEmpty();
    // From the environment: stores separated by ';' (a spec's settings are comma-separated).
    SidecarConfig fromEnv =
        SidecarConfig.parse(
            new String[] {"--filter", "a/b"},
            Map.of(
                "BLOOM_LOOKUP_OBJECT_STORES",
                base + ";secondary,endpoint=http://127.0.0.1:9000,bucket=other"));
    assertThat(fromEnv.objectStores())
        .extracting(ObjectStoreSpec::name)
        .containsExactly("primary", "secondary");

    assertThatThrownBy(() -> config("--filter", "a/b", "--object-store", base + ",secret-key=x"))
        .hasMessageContaining("unknown setting 'secret-key'")
        .hasMessageContaining("credentials only as files")
        .hasMessageNotContaining("=x");
    // A secret pasted without its key is not repeated into the pod's log.
    assertThatThrownBy(
            () -> config("--filter", "a/b", "--object-store", base + ",wJalrXUtnFEMI-S3CRET"))
        .hasMessageContaining("is not key=value")
        .hasMessageNotContaining("S3CRET");
    assertThatThrownBy(
            () ->
                config(
                    "--filter",
                    "a/b",
                    "--object-store",
                    "p,endpoint=https://id:hunter2@s3.example.com,bucket=b"))
        .hasMessageContaining("must not carry user information")
        .hasMessageNotContaining("hunter2");
    assertThatThrownBy(
            () -> config("--filter", "a/b", "--object-store", base + ",access-key-id-file=/x"))
        .hasMessageContaining("give both");
    assertThatThrownBy(() -> config("--filter", "a/b", "--object-store", base + ",parallelism=65"))
        .hasMessageContaining("from 1 to 64");
    assertThatThrownBy(
            () -> config("--filter", "a/b", "--object-store", base + ",read-timeout=11m"))
        .hasMessageContaining("at most 10m");
    assertThatThrownBy(
            () -> config("--filter", "a/b", "--object-store", base, "--object-store", base))
        .hasMessageContaining("given twice");
    assertThatThrownBy(() -> config("--filter", "a/b", "--object-store", "primary,bucket=b"))
        .hasMessageContaining("endpoint is required");
    assertThatThrownBy(() -> config("--filter", "a/b", "--object-store", base + ",x".repeat(5000)))
        .hasMessageContaining("longer than");
  }

  /**
   * Encodes {@code bits} as a store-backed version and uploads its chunks where the reader builds
   * their keys, chunk {@code tamper} (if not -1) with one byte changed after its digest was taken.
   */
  private static Manifest upload(
      S3Client root,
      String bucket,
      String namespace,
      BloomFilterBits bits,
      long keyCount,
      long version,
      int tamper)
      throws Exception {
    List<byte[]> chunks = new ArrayList<>();
    Manifest manifest = encode(bits, keyCount, version, tamper, chunks);
    for (int i = 0; i < chunks.size(); i++) {
      String key = StoreObjectKeys.key(PREFIX, namespace, "ids", manifest.chunks().get(i));
      byte[] chunk = chunks.get(i);
      root.putObject(b -> b.bucket(bucket).key(key), RequestBody.fromBytes(chunk));
    }
    return manifest;
  }

  private static Manifest encode(
      BloomFilterBits bits, long keyCount, long version, int tamper, List<byte[]> chunks)
      throws Exception {
    SnapshotEncoder.Result result =
        SnapshotEncoder.encode(
            bits,
            CHUNK_SIZE,
            (index, data, length, sha) -> {
              byte[] chunk = Arrays.copyOf(data, length);
              if (index == tamper) {
                chunk[chunk.length / 2] ^= 0x01;
              }
              chunks.add(chunk);
            });
    return Manifest.of("ids", version, bits, keyCount, result, Instant.now()).inStore(STORE);
  }
}
