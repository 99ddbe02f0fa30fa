package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.bloomoperator.snapshot.AnnouncedManifest;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Ed25519Keys;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.ManifestSigner;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotLimits;
import io.bloomoperator.snapshot.TrustedKeys;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The local snapshot directory is held to the same limits and trusted keys as the API server. */
class LocalSnapshotTrustTest {

  private static final String NS = "shop";
  private static final String FILTER = "product-ids";
  private static final KeyPair KEY = Ed25519Keys.generate();

  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  @Test
  void unsignedOrForeignSignedLocalSnapshotIsIgnoredByReaderWithTrustedKey() throws IOException {
    ServedSnapshot unsigned = snapshot(null, NS);
    LocalSnapshots.cache(dir, NS, FILTER).write(unsigned);
    assertThat(cache(TrustedKeys.none()).read()).isPresent();
    assertThat(cache(trusted()).read()).isEmpty();

    LocalSnapshots.cache(dir, NS, FILTER)
        .write(snapshot(new ManifestSigner(KEY.getPrivate()), "elsewhere"));
    assertThat(cache(trusted()).read()).isEmpty();

    LocalSnapshots.cache(dir, NS, FILTER).write(snapshot(new ManifestSigner(KEY.getPrivate()), NS));
    assertThat(cache(trusted()).read())
        .get()
        .satisfies(s -> assertThat(s.announced().signature()).isNotNull());
  }

  @Test
  void localSnapshotAboveTheLimitsIsIgnored() throws IOException {
    ServedSnapshot snapshot = snapshot(null, NS);
    LocalSnapshots.cache(dir, NS, FILTER).write(snapshot);
    long size = snapshot.manifest().totalBytes();
    assertThat(
            new LocalSnapshotCache(
                    dir,
                    new Acceptance(
                        NS,
                        FILTER,
                        KeyType.STRING,
                        new SnapshotLimits(size, 10),
                        TrustedKeys.none(),
                        null))
                .read())
        .isPresent();
    assertThat(
            new LocalSnapshotCache(
                    dir,
                    new Acceptance(
                        NS,
                        FILTER,
                        KeyType.STRING,
                        new SnapshotLimits(size - 1, 10),
                        TrustedKeys.none(),
                        null))
                .read())
        .isEmpty();
  }

  @Test
  void localSnapshotClaiming16GiBIsIgnoredWithoutAllocating() throws IOException {
    // As a tampered or corrupted directory could hold it: consistent manifest, a payload file of
    // the announced size (sparse) whose chunk 0 matches. Believing it means a 16 GiB allocation
    // on the starting thread.
    LocalSnapshotCache files = LocalSnapshots.cache(dir, NS, FILTER);
    Manifest hostile = HostileManifest.claiming16GiB(FILTER, 2);
    try (RandomAccessFile payload = new RandomAccessFile(files.payloadFile(2).toFile(), "rw")) {
      payload.write(HostileManifest.CHUNK0);
      payload.setLength(hostile.totalBytes());
    }
    ObjectNode root = JSON.createObjectNode();
    root.put("namespace", NS);
    root.put("filterName", FILTER);
    root.put("payloadFile", files.payloadFile(2).getFileName().toString());
    root.set("manifest", JSON.readTree(hostile.toJson()));
    Files.writeString(files.manifestFile(), root.toString(), StandardCharsets.UTF_8);

    assertThat(files.read()).isEmpty();
  }

  private LocalSnapshotCache cache(TrustedKeys trusted) {
    return new LocalSnapshotCache(
        dir,
        new Acceptance(NS, FILTER, KeyType.STRING, SnapshotLimits.forThisHeap(), trusted, null));
  }

  private static TrustedKeys trusted() {
    return TrustedKeys.of(List.of(KEY.getPublic()));
  }

  private static ServedSnapshot snapshot(ManifestSigner signer, String signedNamespace)
      throws IOException {
    List<String> keys = TestKeys.strings("k", 1_000);
    BloomFilterBits bits = TestKeys.stringFilter(2_000, keys);
    SnapshotEncoder.Result encoded = SnapshotEncoder.encode(bits, 1_000_000, (i, d, l, s) -> {});
    Manifest manifest = Manifest.of(FILTER, 1, bits, keys.size(), encoded, Instant.now());
    String json = manifest.toJson();
    String signature = signer == null ? null : signer.sign(signedNamespace, json).toData();
    return new ServedSnapshot(new AnnouncedManifest(manifest, json, signature), bits);
  }
}
