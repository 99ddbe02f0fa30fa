package io.bloomoperator.storeread;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.ManifestSigner;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.StoreObjectKeys;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * Publishes store-backed snapshots the way the operator will (chunk objects at {@link
 * StoreObjectKeys#key} first, then the manifest ConfigMap naming the store), written here with the
 * format module alone so the reader is tested without the operator's writer.
 */
final class StoreSnapshots {

  static final String STORE = "primary";
  static final String PREFIX = "bloom";
  static final int CHUNK_SIZE = 1_000_000;

  /** A manifest and its chunks' bytes, in manifest order. */
  record Encoded(Manifest manifest, List<byte[]> chunks) {
    long payloadBytes() {
      return manifest.totalBytes();
    }
  }

  private final S3Client root;
  private final String bucket;
  private final KubernetesClient client;
  private final String namespace;
  private final String filter;

  StoreSnapshots(
      S3Client root, String bucket, KubernetesClient client, String namespace, String filter) {
    this.root = root;
    this.bucket = bucket;
    this.client = client;
    this.namespace = namespace;
    this.filter = filter;
  }

  static Encoded encode(String filter, BloomFilterBits bits, long keyCount, long version) {
    List<byte[]> chunks = new ArrayList<>();
    try {
      SnapshotEncoder.Result result =
          SnapshotEncoder.encode(
              bits,
              CHUNK_SIZE,
              (index, data, length, sha) -> chunks.add(Arrays.copyOf(data, length)));
      Manifest manifest =
          Manifest.of(filter, version, bits, keyCount, result, Instant.now()).inStore(STORE);
      return new Encoded(manifest, chunks);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The key chunk {@code index} of {@code encoded} has in {@code ns}'s directory of the filter. */
  String key(String ns, Encoded encoded, int index) {
    return StoreObjectKeys.key(PREFIX, ns, filter, encoded.manifest().chunks().get(index));
  }

  /** Uploads the chunks of {@code encoded} into the filter's directory of {@code ns}. */
  void upload(String ns, Encoded encoded) {
    for (int i = 0; i < encoded.chunks().size(); i++) {
      String key = key(ns, encoded, i);
      root.putObject(
          b -> b.bucket(bucket).key(key), RequestBody.fromBytes(encoded.chunks().get(i)));
    }
  }

  /** Uploads to this namespace's directory, then writes the manifest (signed if a signer). */
  Encoded publish(BloomFilterBits bits, long keyCount, long version, ManifestSigner signer) {
    Encoded encoded = encode(filter, bits, keyCount, version);
    upload(namespace, encoded);
    writeManifest(encoded.manifest().toJson(), signer);
    return encoded;
  }

  /** Writes (creates or replaces) the manifest ConfigMap with exactly {@code json}. */
  void writeManifest(String json, ManifestSigner signer) {
    ConfigMap desired =
        SnapshotConfigMaps.manifest(
            namespace,
            filter,
            json,
            signer == null ? null : signer.sign(namespace, json).toData(),
            null);
    client.configMaps().inNamespace(namespace).resource(desired).forceConflicts().serverSideApply();
  }
}
