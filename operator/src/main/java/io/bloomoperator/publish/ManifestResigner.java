package io.bloomoperator.publish;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.ChunkStore;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.ManifestSignature;
import io.bloomoperator.snapshot.ManifestSigner;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Signs a published manifest that a confirming rebuild finds unsigned or signed by another key
 * (signing was just enabled, or the key rotated), so that a rebuild request suffices there; but
 * only if the manifest is exactly the one this operator would write for the rebuilt bits: whoever
 * can edit the ConfigMap must not get the operator to sign their version of it.
 */
final class ManifestResigner {

  private static final Logger LOG = LoggerFactory.getLogger(ManifestResigner.class);

  private final KubernetesClient client;
  private final SigningKeySecret signingKey;
  private final String namespace;
  private final String filterName;
  private final ChunkStore chunks;

  /** The object store the operator's manifests name, or null for ConfigMaps. */
  private final String storeName;

  ManifestResigner(
      KubernetesClient client,
      SigningKeySecret signingKey,
      String namespace,
      String filterName,
      ChunkStore chunks,
      String storeName) {
    this.client = client;
    this.storeName = storeName;
    this.signingKey = signingKey;
    this.namespace = namespace;
    this.filterName = filterName;
    this.chunks = chunks;
  }

  /**
   * Adds the signature of {@code manifest}'s exact text to it when it has none or one by another
   * key. Best effort, like the rest of a confirm: a failure only leaves the signature as it was.
   *
   * @param published the manifest as parsed
   * @param bits the rebuilt filter, which the manifest must describe exactly
   */
  void resignIfNeeded(
      ConfigMap manifest, Manifest published, BloomFilterBits bits, long keyCount, int chunkSize) {
    String json = SnapshotConfigMaps.manifestJson(manifest);
    if (signingKey == null || json == null || published == null) {
      return;
    }
    ManifestSigner signer;
    try {
      signer = signingKey.load(client);
    } catch (PublishException e) {
      LOG.warn("{}/{}: manifest not re-signed: {}", namespace, filterName, e.getMessage());
      return;
    }
    String existing = SnapshotConfigMaps.signatureData(manifest);
    try {
      if (existing != null && signer.keyId().equals(ManifestSignature.fromData(existing).keyId())) {
        return;
      }
    } catch (SnapshotVerificationException e) {
      // malformed: replace it
    }
    if (!writtenFor(published, bits, keyCount, chunkSize)) {
      LOG.warn(
          "{}/{}: the published manifest is not the one this build would write; not "
              + "signing it (the next new version will be signed)",
          namespace,
          filterName);
      return;
    }
    Map<String, String> signed = new HashMap<>(manifest.getData());
    signed.putAll(
        SnapshotConfigMaps.manifest(
                namespace, filterName, json, signer.sign(namespace, json).toData(), null)
            .getData());
    manifest.setData(signed);
  }

  /**
   * Whether {@code published} is field for field what {@link SnapshotStore#publish} writes for
   * {@code bits} as its version (its creation time aside, which is not reproducible). Costs one
   * digest pass.
   */
  private boolean writtenFor(
      Manifest published, BloomFilterBits bits, long keyCount, int chunkSize) {
    Instant createdAt;
    try {
      createdAt = Instant.parse(published.createdAt());
    } catch (java.time.format.DateTimeParseException e) {
      return false;
    }
    try {
      Manifest expected =
          Manifest.of(
                  filterName,
                  published.version(),
                  bits,
                  keyCount,
                  SnapshotEncoder.encode(bits, chunkSize, (index, data, length, sha256) -> {}),
                  createdAt)
              .inStore(storeName);
      if (!published.chained()) {
        return expected.equals(published);
      }
      // A chain cannot be recomputed from the bits alone: check every field that describes the
      // result, then that base and deltas, as stored, verifiably produce exactly these bits.
      return expected.sha256().equals(published.sha256())
          && expected.keyCount() == published.keyCount()
          && expected.expectedFpp() == published.expectedFpp()
          && published.describes(bits)
          && filterName.equals(published.filterName())
          && java.util.Objects.equals(storeName, published.store())
          && SnapshotDecoder.decode(published, chunks).equals(bits);
    } catch (IOException | SnapshotVerificationException e) {
      return false;
    }
  }
}
