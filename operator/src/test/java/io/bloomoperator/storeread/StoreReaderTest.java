package io.bloomoperator.storeread;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.snapshot.Ed25519Keys;
import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.ManifestSigner;
import io.bloomoperator.snapshot.ObjectStoreException;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotRefusedException;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TcpProxy;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.servers.S3Server;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.bloomoperator.watch.SnapshotPublisher;
import io.bloomoperator.watch.TestKeys;
import io.bloomoperator.watch.s3.S3ObjectStore;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * Readers of snapshots whose chunks are in an object store (issue 19), on a real S3 server
 * (versitygw) and a real API server: the manifest ConfigMap names only the store; endpoint, bucket
 * and read credentials are the reader's own, and every chunk is verified before a swap.
 */
@RealKubernetes
class StoreReaderTest {

  private static final String FILTER = "product-ids";
  private static final Duration WAIT = Duration.ofSeconds(30);

  private static List<String> keys(String prefix, int n) {
    List<String> keys = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      keys.add(prefix + "-" + i);
    }
    return keys;
  }

  private static S3ObjectStore.Builder store(URI endpoint, String bucket) {
    return S3ObjectStore.builder()
        .endpoint(endpoint)
        .bucket(bucket)
        .prefix(StoreSnapshots.PREFIX)
        .region(S3Server.REGION);
  }

  private static StaticCredentialsProvider credentials(String access, String secret) {
    return StaticCredentialsProvider.create(AwsBasicCredentials.create(access, secret));
  }

  @Test
  void readOnlyReaderLoadsSignedStoreSnapshotsAndSwapsWithoutRestart(
      KubernetesClient client, TestNamespace ns, @TempDir Path secret) throws Exception {
    String readerSecret = "reader-secret-" + System.nanoTime();
    try (S3Server server = S3Server.start(Map.of("bloomreader", readerSecret));
        S3Client root = server.client()) {
      // The reader's only right: GET under the store's prefix (what an IAM policy gives it on AWS).
      String bucket = server.createReadOnlyBucket("reads", "bloomreader", StoreSnapshots.PREFIX);
      // A Secret of the application's namespace, mounted as files.
      Files.writeString(secret.resolve("accessKeyId"), "bloomreader\n", StandardCharsets.UTF_8);
      Files.writeString(secret.resolve("secretAccessKey"), readerSecret, StandardCharsets.UTF_8);

      KeyPair key = Ed25519Keys.generate();
      ManifestSigner signer = new ManifestSigner(key.getPrivate());
      StoreSnapshots snapshots = new StoreSnapshots(root, bucket, client, ns.name(), FILTER);
      List<String> v1Keys = keys("v1", 2_000);
      List<String> v2Keys = keys("v2", 2_000);
      StoreSnapshots.Encoded v1 =
          snapshots.publish(TestKeys.stringFilter(1_000_000, v1Keys), 2_000, 1, signer);
      assertThat(v1.chunks()).as("several chunks").hasSizeGreaterThan(1);

      RecordingListener events = new RecordingListener();
      try (S3ObjectStore store =
              store(server.endpoint(), bucket)
                  .accessKeyFiles(secret.resolve("accessKeyId"), secret.resolve("secretAccessKey"))
                  .build();
          LiveBloomFilter<String> live =
              BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
                  .trustedKey(key.getPublic())
                  .objectStore(StoreSnapshots.STORE, store)
                  .listener(events)
                  .start()) {
        assertThat(live.awaitReady(WAIT)).isTrue();
        assertThat(live.currentVersion()).isEqualTo(1);
        assertThat(v1Keys).allMatch(live::mightContain);

        snapshots.publish(TestKeys.stringFilter(1_000_000, v2Keys), 2_000, 2, signer);
        await().atMost(WAIT).until(() -> live.currentVersion() == 2);
        assertThat(v2Keys).allMatch(live::mightContain);
        assertThat(events.failures).isEmpty();
        assertThat(events.swaps).containsExactly(1L, 2L);
      }
      // Only the manifest is in the API server: no chunk ConfigMap was written or read.
      assertThat(client.configMaps().inNamespace(ns.name()).list().getItems())
          .extracting(cm -> cm.getMetadata().getName())
          .containsExactly(SnapshotNames.manifestName(FILTER));

      // The reader's credentials read, and do nothing else.
      try (S3Client reader = server.client("bloomreader", readerSecret)) {
        assertThat(
                reader
                    .getObjectAsBytes(b -> b.bucket(bucket).key(snapshots.key(ns.name(), v1, 0)))
                    .asByteArray())
            .isEqualTo(v1.chunks().get(0));
        assertThatThrownBy(
                () ->
                    reader.putObject(
                        b -> b.bucket(bucket).key(snapshots.key(ns.name(), v1, 0)),
                        RequestBody.fromString("overwritten")))
            .isInstanceOfSatisfying(
                S3Exception.class, e -> assertThat(e.statusCode()).isEqualTo(403));
        assertThatThrownBy(
                () ->
                    reader.deleteObject(b -> b.bucket(bucket).key(snapshots.key(ns.name(), v1, 0))))
            .isInstanceOfSatisfying(
                S3Exception.class, e -> assertThat(e.statusCode()).isEqualTo(403));
      }
    }
  }

  @Test
  void wrongOrMissingCredentialsAreAClearReasonAndTheServedFilterStays(
      KubernetesClient client, TestNamespace ns, @TempDir Path noSecret) throws Exception {
    S3Server server = S3Server.shared();
    String bucket = server.createBucket("creds");
    List<String> v1Keys = keys("v1", 1_000);
    new SnapshotPublisher(client, ns.name(), FILTER)
        .publish(TestKeys.stringFilter(10_000, v1Keys), 1_000, 1); // ConfigMaps
    try (S3Client root = server.client()) {
      StoreSnapshots snapshots = new StoreSnapshots(root, bucket, client, ns.name(), FILTER);
      RecordingListener wrong = new RecordingListener();
      RecordingListener missing = new RecordingListener();
      try (S3ObjectStore wrongStore =
              store(server.endpoint(), bucket)
                  .credentials(credentials(server.accessKey(), "not-the-secret"))
                  .build();
          S3ObjectStore missingStore =
              store(server.endpoint(), bucket)
                  .accessKeyFiles(noSecret.resolve("accessKeyId"), noSecret.resolve("secret"))
                  .build();
          LiveBloomFilter<String> wrongReader =
              BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
                  .objectStore(StoreSnapshots.STORE, wrongStore)
                  .listener(wrong)
                  .start();
          LiveBloomFilter<String> missingReader =
              BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
                  .objectStore(StoreSnapshots.STORE, missingStore)
                  .listener(missing)
                  .start()) {
        assertThat(wrongReader.awaitReady(WAIT)).isTrue();
        assertThat(missingReader.awaitReady(WAIT)).isTrue();

        snapshots.publish(TestKeys.stringFilter(10_000, keys("v2", 1_000)), 1_000, 2, null);

        assertThat(wrong.awaitFailure(WAIT))
            .isInstanceOf(ObjectStoreException.class)
            .hasMessageContaining("HTTP 403")
            .hasMessageNotContaining("not-the-secret")
            // The store's own text (its error message, request ids) stays out of the failure
            // and its causes, which listeners and logs print.
            .hasNoCause();
        assertThat(LoadFailureReason.of(wrong.failures.get(0)))
            .isEqualTo(LoadFailureReason.STORE_DENIED);
        assertThat(missing.awaitFailure(WAIT))
            .isInstanceOf(ObjectStoreException.class)
            .hasMessageContaining("no credentials");
        assertThat(LoadFailureReason.of(missing.failures.get(0)))
            .isEqualTo(LoadFailureReason.STORE_DENIED);
        await().atMost(WAIT).until(() -> wrongReader.failures(LoadFailureReason.STORE_DENIED) >= 1);
        for (LiveBloomFilter<String> reader : List.of(wrongReader, missingReader)) {
          assertThat(reader.currentVersion()).isEqualTo(1);
          assertThat(v1Keys).allMatch(reader::mightContain);
        }
      }
    }
  }

  @Test
  void aTamperedObjectIsRefusedAndTheServedFilterStays(KubernetesClient client, TestNamespace ns)
      throws Exception {
    S3Server server = S3Server.shared();
    String bucket = server.createBucket("tamper");
    try (S3Client root = server.client()) {
      StoreSnapshots snapshots = new StoreSnapshots(root, bucket, client, ns.name(), FILTER);
      List<String> v1Keys = keys("v1", 2_000);
      snapshots.publish(TestKeys.stringFilter(1_000_000, v1Keys), 2_000, 1, null);
      RecordingListener events = new RecordingListener();
      try (S3ObjectStore store =
              store(server.endpoint(), bucket)
                  .credentials(credentials(server.accessKey(), server.secretKey()))
                  .build();
          LiveBloomFilter<String> live =
              BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
                  .objectStore(StoreSnapshots.STORE, store)
                  .listener(events)
                  .start()) {
        assertThat(live.awaitReady(WAIT)).isTrue();

        StoreSnapshots.Encoded v2 =
            StoreSnapshots.encode(FILTER, TestKeys.stringFilter(1_000_000, keys("v2", 9)), 9, 2);
        snapshots.upload(ns.name(), v2);
        // Behind the server's back: one byte of chunk 1 changes on its disk, same size.
        Path file = server.objectFile(bucket, snapshots.key(ns.name(), v2, 1));
        byte[] bytes = Files.readAllBytes(file);
        bytes[bytes.length / 2] ^= 0x5a;
        Files.write(file, bytes);
        snapshots.writeManifest(v2.manifest().toJson(), null);

        Exception failure = events.awaitFailure(WAIT);
        assertThat(failure).hasMessageContaining("sha256 mismatch").hasMessageContaining("chunk 1");
        assertThat(LoadFailureReason.of(failure)).isEqualTo(LoadFailureReason.VERIFICATION);
        assertThat(live.currentVersion()).isEqualTo(1);
        assertThat(v1Keys).allMatch(live::mightContain);
      }
    }
  }

  @Test
  void aForgedManifestCannotReachOutsideTheFiltersDirectory(
      KubernetesClient client, TestNamespace ns) throws Exception {
    S3Server server = S3Server.shared();
    String bucket = server.createBucket("forged");
    try (S3Client root = server.client();
        TcpProxy proxy = new TcpProxy("127.0.0.1", server.port())) {
      StoreSnapshots snapshots = new StoreSnapshots(root, bucket, client, ns.name(), FILTER);
      List<String> v1Keys = keys("v1", 2_000);
      snapshots.publish(TestKeys.stringFilter(100_000, v1Keys), 2_000, 1, null);
      // Another namespace's snapshot of a filter of the same name, in the same bucket.
      StoreSnapshots.Encoded victim =
          StoreSnapshots.encode(FILTER, TestKeys.stringFilter(100_000, keys("victim", 9)), 9, 2);
      snapshots.upload("victim-ns", victim);

      RecordingListener events = new RecordingListener();
      try (S3ObjectStore store =
              store(URI.create("http://127.0.0.1:" + proxy.port()), bucket)
                  .credentials(credentials(server.accessKey(), server.secretKey()))
                  .build();
          LiveBloomFilter<String> live =
              BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
                  .objectStore(StoreSnapshots.STORE, store)
                  .listener(events)
                  .start()) {
        assertThat(live.awaitReady(WAIT)).isTrue();
        long sent = proxy.bytesToTarget();

        // 1. A chunk name climbing out of the filter's directory into the victim's.
        Manifest climbing =
            withFirstChunkName(
                victim.manifest(),
                "../../victim-ns/" + FILTER + "/" + victim.manifest().chunks().get(0).name());
        snapshots.writeManifest(climbing.toJson(), null);
        Exception refused = events.awaitFailure(WAIT);
        assertThat(refused).isInstanceOf(SnapshotRefusedException.class);
        assertThat(((SnapshotRefusedException) refused).reason())
            .isEqualTo(LoadFailureReason.FOREIGN_CHUNK);
        assertThat(proxy.bytesToTarget()).as("nothing requested from the store").isEqualTo(sent);

        // 2. The victim's manifest as is: its chunk names are canonical, but the reader builds
        // every key in its own namespace's directory, where those objects are not.
        events.failures.clear();
        snapshots.writeManifest(victim.manifest().toJson(), null);
        Exception missing = events.awaitFailure(WAIT);
        assertThat(missing).hasMessageContaining("missing");
        assertThat(LoadFailureReason.of(missing)).isEqualTo(LoadFailureReason.VERIFICATION);

        // 3. A store this reader is not configured for: refused before any request.
        events.failures.clear();
        long v2Failures = events.failuresOf(2);
        long sentBefore = proxy.bytesToTarget();
        snapshots.writeManifest(
            StoreSnapshots.encode(FILTER, TestKeys.stringFilter(100_000, keys("x", 9)), 9, 3)
                .manifest()
                .inStore("elsewhere")
                .toJson(),
            null);
        // By version: the reader may still be retrying version 2 and report it failing again.
        Exception unknown = events.awaitFailure(3, WAIT);
        assertThat(unknown).isInstanceOf(SnapshotRefusedException.class);
        assertThat(((SnapshotRefusedException) unknown).reason())
            .isEqualTo(LoadFailureReason.UNKNOWN_STORE);
        // One watch thread: a retry of version 2 that ran before the refusal was reported before
        // it, and only such a retry may have sent anything in between.
        if (events.failuresOf(2) == v2Failures) {
          assertThat(proxy.bytesToTarget()).isEqualTo(sentBefore);
        }
        // Version 3 is what the reader follows now: nothing is requested for it, then or later.
        long afterRefusal = proxy.bytesToTarget();
        Thread.sleep(2_000);
        assertThat(proxy.bytesToTarget()).isEqualTo(afterRefusal);

        assertThat(live.currentVersion()).isEqualTo(1);
        assertThat(v1Keys).allMatch(live::mightContain);
      }
    }
  }

  @Test
  void aBrokenDownloadIsResumedWhereItStoppedAndVerified(KubernetesClient client, TestNamespace ns)
      throws Exception {
    S3Server server = S3Server.shared();
    String bucket = server.createBucket("resume");
    try (S3Client root = server.client();
        TcpProxy proxy = new TcpProxy("127.0.0.1", server.port(), 700_000)) {
      StoreSnapshots snapshots = new StoreSnapshots(root, bucket, client, ns.name(), FILTER);
      List<String> v1Keys = keys("v1", 2_000);
      StoreSnapshots.Encoded v1 =
          snapshots.publish(TestKeys.stringFilter(2_000_000, v1Keys), 2_000, 1, null);
      assertThat(v1.payloadBytes()).isGreaterThan(2_000_000);
      // The first connection to the store breaks 700 kB into its answer: inside chunk 0.
      proxy.cutNext(1);

      RecordingListener events = new RecordingListener();
      try (S3ObjectStore store =
              store(URI.create("http://127.0.0.1:" + proxy.port()), bucket)
                  .credentials(credentials(server.accessKey(), server.secretKey()))
                  .parallelism(1)
                  .build();
          LiveBloomFilter<String> live =
              BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
                  .objectStore(StoreSnapshots.STORE, store)
                  .listener(events)
                  .start()) {
        assertThat(live.awaitReady(WAIT)).isTrue();
        assertThat(v1Keys).allMatch(live::mightContain);
        assertThat(events.failures).as("resumed inside the load, not a failed load").isEmpty();
        assertThat(proxy.accepted()).as("a second connection after the cut").isGreaterThan(1);
        // Resumed from the byte where it stopped: the 700 kB that arrived are not fetched again
        // (a restart of the chunk would move payload + ~700 kB).
        assertThat(proxy.bytesFromTarget())
            .as("bytes from the store")
            .isLessThan(v1.payloadBytes() + 100_000);
      }
    }
  }

  @Test
  void aStoreThatBreaksOffEveryAnswerCostsABoundedNumberOfRequests(
      KubernetesClient client, TestNamespace ns) throws Exception {
    S3Server server = S3Server.shared();
    String bucket = server.createBucket("drip");
    try (S3Client root = server.client();
        TcpProxy proxy = new TcpProxy("127.0.0.1", server.port(), 4_000)) {
      StoreSnapshots snapshots = new StoreSnapshots(root, bucket, client, ns.name(), FILTER);
      snapshots.publish(TestKeys.stringFilter(2_000_000, keys("v1", 2_000)), 2_000, 1, null);
      // Every answer brings about 3.5 kB of a 1 MiB chunk and breaks off: progress each time.
      // Without a bound the reader would ask about 300 times per chunk.
      proxy.cutNext(Integer.MAX_VALUE);
      RecordingListener events = new RecordingListener();
      try (S3ObjectStore store =
              store(URI.create("http://127.0.0.1:" + proxy.port()), bucket)
                  .credentials(credentials(server.accessKey(), server.secretKey()))
                  .parallelism(1)
                  .build();
          LiveBloomFilter<String> live =
              BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
                  .objectStore(StoreSnapshots.STORE, store)
                  .listener(events)
                  .start()) {
        assertThat(events.awaitFailure(WAIT))
            .isInstanceOf(ObjectStoreException.class)
            .hasMessageContaining("requests did not complete it");
        assertThat(LoadFailureReason.of(events.failures.get(0)))
            .isEqualTo(LoadFailureReason.STORE_UNAVAILABLE);
        // attempts + 16 (a 1 MiB chunk at 64 KiB a request) + 1, for the one chunk fetched.
        assertThat(proxy.accepted()).isLessThanOrEqualTo(S3ObjectStore.DEFAULT_ATTEMPTS + 17 + 1);
        assertThat(live.currentVersion()).isEqualTo(-1);
      }
    }
  }

  private static Manifest withFirstChunkName(Manifest manifest, String name) {
    List<Manifest.ChunkRef> chunks = new ArrayList<>(manifest.chunks());
    Manifest.ChunkRef first = chunks.get(0);
    chunks.set(0, new Manifest.ChunkRef(name, first.bytes(), first.sha256()));
    return new Manifest(
        manifest.format(),
        manifest.version(),
        manifest.filterName(),
        manifest.keyType(),
        manifest.numBits(),
        manifest.numHashFunctions(),
        manifest.keyCount(),
        manifest.expectedFpp(),
        manifest.totalBytes(),
        manifest.sha256(),
        manifest.createdAt(),
        chunks,
        manifest.chain(),
        manifest.store());
  }
}
