package io.bloomoperator.watch;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotLimits;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.bloomoperator.snapshot.TrustedKeys;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;

/**
 * Reads a manifest ConfigMap and loads the snapshot it announces from the API server: one GET per
 * chunk, by name, in order, so at most one chunk is held besides the filter being built (and only
 * get on configmaps is needed, no list over the chunks). The manifest is checked against the limits
 * and trusted keys before any chunk is fetched; everything else is verified by {@link
 * SnapshotDecoder}.
 */
final class ApiSnapshotLoader {

  private final KubernetesClient client;
  private final String namespace;
  private final String filterName;
  private final KeyType keyType;
  private final SnapshotLimits limits;
  private final TrustedKeys trustedKeys;

  ApiSnapshotLoader(
      KubernetesClient client,
      String namespace,
      String filterName,
      KeyType keyType,
      SnapshotLimits limits,
      TrustedKeys trustedKeys) {
    this.client = client;
    this.namespace = namespace;
    this.filterName = filterName;
    this.keyType = keyType;
    this.limits = limits;
    this.trustedKeys = trustedKeys;
  }

  /**
   * Parses the manifest held by the manifest ConfigMap; {@link #check} decides whether to accept
   * it.
   *
   * @throws SnapshotVerificationException if the data key is missing or the JSON is invalid
   */
  Announcement readManifest(ConfigMap configMap) throws SnapshotVerificationException {
    SnapshotConfigMaps.StoredManifest stored = SnapshotConfigMaps.readManifest(configMap);
    return new Announcement(stored.manifest(), stored.json(), stored.signature());
  }

  /**
   * Checks a parsed manifest before anything it names is fetched or allocated: signature (when keys
   * are trusted), filter name, size limits and chunk names.
   *
   * @throws io.bloomoperator.snapshot.SnapshotRefusedException if the manifest lacks a valid
   *     trusted signature, is for another filter, too large, or names foreign chunks
   */
  void check(Announcement announcement) throws SnapshotVerificationException {
    trustedKeys.verify(namespace, announcement.json(), announcement.signature());
    limits.check(announcement.manifest(), filterName);
  }

  /**
   * Fetches and verifies the snapshot of {@code announcement}: when {@code held} (the snapshot
   * served now, or null) is a version of the announced chain, only the deltas after it, applied to
   * a copy of its bits; otherwise the base and every delta.
   *
   * @throws SnapshotVerificationException if the key type is not the requested one (checked before
   *     any chunk is fetched), a chunk is missing, or any size, digest or header check fails
   * @throws IOException if a chunk has no binary data or not the announced amount of it
   * @throws io.fabric8.kubernetes.client.KubernetesClientException if the API server does not
   *     answer
   */
  LoadedSnapshot load(Announcement announcement, LoadedSnapshot held)
      throws SnapshotVerificationException, IOException {
    Manifest manifest = announcement.manifest();
    requireKeyType(manifest, keyType);
    // Holding a version of the announced chain, only the deltas after it are fetched.
    BloomFilterBits bits =
        held == null
            ? SnapshotDecoder.decode(manifest, new ConfigMapChunks(client, namespace))
            : SnapshotDecoder.update(
                manifest,
                held.bits(),
                held.version(),
                held.manifest().sha256(),
                new ConfigMapChunks(client, namespace));
    return new LoadedSnapshot(manifest, bits, announcement.json(), announcement.signature());
  }

  /**
   * Refuses a snapshot of the wrong key type: hashing a Long key against String hashes (or the
   * reverse) gives answers that look plausible and are wrong.
   */
  static void requireKeyType(Manifest manifest, KeyType expected)
      throws SnapshotVerificationException {
    if (manifest.keyType() != expected) {
      throw new SnapshotVerificationException(
          "snapshot v"
              + manifest.version()
              + " of '"
              + manifest.filterName()
              + "' holds "
              + manifest.keyType().crdName()
              + " keys but this filter was created for "
              + expected.crdName()
              + " keys");
    }
  }
}
