package io.bloomoperator.watch;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.ManifestSigner;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotDelta;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.Arrays;

/**
 * Publishes snapshots the way the operator's SnapshotStore does: every chunk as an immutable
 * ConfigMap (binaryData "chunk", chunk labels) created first, then the manifest ConfigMap created,
 * or updated with its resourceVersion as precondition. A tamper hook can change chunk bytes after
 * their digest went into the manifest, which is what a corrupted chunk looks like to a reader.
 * Public for the tests of other packages and modules (the metrics, the Spring Boot starter).
 */
public final class SnapshotPublisher {

  /** The operator's chunk size. */
  static final int OPERATOR_CHUNK_SIZE = 1_000_000;

  /** Replaces the bytes stored for a chunk; the manifest keeps the digest of the original. */
  @FunctionalInterface
  interface Tamper {
    byte[] apply(int index, byte[] original);

    Tamper NONE = (index, original) -> original;
  }

  /** What was published: the manifest and the untampered payload (all chunks concatenated). */
  public record Published(Manifest manifest, byte[] payload) {}

  private final KubernetesClient client;
  private final String namespace;
  private final String filterName;

  public SnapshotPublisher(KubernetesClient client, String namespace, String filterName) {
    this.client = client;
    this.namespace = namespace;
    this.filterName = filterName;
  }

  public Published publish(BloomFilterBits bits, long keyCount, long version) {
    return publish(bits, keyCount, version, OPERATOR_CHUNK_SIZE, Tamper.NONE);
  }

  Published publish(
      BloomFilterBits bits, long keyCount, long version, int chunkSize, Tamper tamper) {
    Published published = createChunks(bits, keyCount, version, chunkSize, tamper);
    writeManifest(published.manifest());
    return published;
  }

  /** Step one of a publish: the chunks only; the manifest is not touched. */
  Published createChunks(
      BloomFilterBits bits, long keyCount, long version, int chunkSize, Tamper tamper) {
    ByteArrayOutputStream payload = new ByteArrayOutputStream();
    try {
      SnapshotEncoder.Result encoded =
          SnapshotEncoder.encode(
              bits,
              chunkSize,
              (index, data, length, sha) -> {
                byte[] chunk = Arrays.copyOf(data, length);
                payload.write(chunk);
                createChunk(version, index, tamper.apply(index, chunk.clone()));
              });
      Manifest manifest = Manifest.of(filterName, version, bits, keyCount, encoded, Instant.now());
      return new Published(manifest, payload.toByteArray());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Publishes {@code bits} as {@code version}, a delta on top of what {@code previous} publishes
   * (whose bits are {@code previousBits}), as the operator's delta publish does: delta chunks
   * first, then the manifest.
   */
  public Manifest publishDelta(
      Manifest previous,
      BloomFilterBits previousBits,
      BloomFilterBits bits,
      long keyCount,
      long version) {
    Manifest manifest =
        createDelta(
            previous, previousBits, bits, keyCount, version, OPERATOR_CHUNK_SIZE, Tamper.NONE);
    writeManifest(manifest);
    return manifest;
  }

  /**
   * Step one of a delta publish: the delta chunks of {@code version} (in {@code chunkSize} bytes,
   * each stored as {@code tamper} makes it), and the manifest that names them, not written.
   */
  Manifest createDelta(
      Manifest previous,
      BloomFilterBits previousBits,
      BloomFilterBits bits,
      long keyCount,
      long version,
      int chunkSize,
      Tamper tamper) {
    try {
      SnapshotDelta.Result delta =
          SnapshotDelta.encode(
              previousBits,
              bits,
              chunkSize,
              (index, data, length, sha) ->
                  client
                      .configMaps()
                      .inNamespace(namespace)
                      .resource(
                          SnapshotConfigMaps.deltaChunk(
                              namespace,
                              filterName,
                              version,
                              index,
                              tamper.apply(index, Arrays.copyOf(data, length)),
                              length))
                      .create());
      return Manifest.withDelta(
          previous, version, bits, keyCount, SnapshotEncoder.sha256(bits), delta, Instant.now());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  void createChunk(long version, int index, byte[] bytes) {
    client
        .configMaps()
        .inNamespace(namespace)
        .resource(
            SnapshotConfigMaps.chunk(namespace, filterName, version, index, bytes, bytes.length))
        .create();
  }

  /** Step two of a publish: create the manifest, or update it guarded by its resourceVersion. */
  void writeManifest(Manifest manifest) {
    writeManifestJson(manifest.toJson());
  }

  public void writeManifestJson(String json) {
    writeManifestData(json, null);
  }

  /** Publishes {@code manifest} with its signature for {@code namespace} by {@code signer}. */
  void writeSignedManifest(Manifest manifest, ManifestSigner signer, String signedNamespace) {
    String json = manifest.toJson();
    writeManifestData(json, signer.sign(signedNamespace, json).toData());
  }

  /**
   * Replaces the manifest ConfigMap's data as a whole: manifest.json and manifest.sig (none when
   * {@code signature} is null).
   */
  void writeManifestData(String json, String signature) {
    ConfigMap current = manifestConfigMap();
    ConfigMap desired = SnapshotConfigMaps.manifest(namespace, filterName, json, signature, null);
    if (current == null) {
      client.configMaps().inNamespace(namespace).resource(desired).create();
    } else {
      desired.getMetadata().setAnnotations(current.getMetadata().getAnnotations());
      desired.getMetadata().setResourceVersion(current.getMetadata().getResourceVersion());
      client.configMaps().inNamespace(namespace).resource(desired).update();
    }
  }

  /** Changes only an annotation of the manifest, as the operator's janitor does. */
  void annotateManifest(String key, String value) {
    client
        .configMaps()
        .inNamespace(namespace)
        .withName(SnapshotNames.manifestName(filterName))
        .edit(
            cm ->
                new ConfigMapBuilder(cm)
                    .editMetadata()
                    .addToAnnotations(key, value)
                    .endMetadata()
                    .build());
  }

  void deleteManifest() {
    client
        .configMaps()
        .inNamespace(namespace)
        .withName(SnapshotNames.manifestName(filterName))
        .withTimeout(10, java.util.concurrent.TimeUnit.SECONDS)
        .delete();
  }

  ConfigMap manifestConfigMap() {
    return client
        .configMaps()
        .inNamespace(namespace)
        .withName(SnapshotNames.manifestName(filterName))
        .get();
  }
}
