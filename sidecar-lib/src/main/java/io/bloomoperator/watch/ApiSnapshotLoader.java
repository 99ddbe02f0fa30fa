package io.bloomoperator.watch;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.util.Base64;
import java.util.Map;

/**
 * Reads a manifest ConfigMap and loads the snapshot it announces from the API server: one GET per chunk,
 * by name, in order, so at most one chunk is held besides the filter being built (and only get on
 * configmaps is needed, no list over the chunks). Everything is verified by {@link SnapshotDecoder}.
 */
final class ApiSnapshotLoader {

  private final KubernetesClient client;
  private final String namespace;
  private final String filterName;
  private final KeyType keyType;

  ApiSnapshotLoader(KubernetesClient client, String namespace, String filterName, KeyType keyType) {
    this.client = client;
    this.namespace = namespace;
    this.filterName = filterName;
    this.keyType = keyType;
  }

  /**
   * Parses and validates the manifest held by the manifest ConfigMap.
   *
   * @throws SnapshotVerificationException if the data key is missing, the JSON is invalid, or the
   *     manifest is for another filter
   */
  Manifest readManifest(ConfigMap configMap) throws SnapshotVerificationException {
    Map<String, String> data = configMap.getData();
    String json = data == null ? null : data.get(SnapshotNames.MANIFEST_DATA_KEY);
    if (json == null) {
      throw new SnapshotVerificationException("ConfigMap " + namespace + "/"
          + configMap.getMetadata().getName() + " has no data key '" + SnapshotNames.MANIFEST_DATA_KEY + "'");
    }
    Manifest manifest = Manifest.fromJson(json);
    if (!filterName.equals(manifest.filterName())) {
      throw new SnapshotVerificationException("manifest " + namespace + "/"
          + configMap.getMetadata().getName() + " is for filter '" + manifest.filterName()
          + "', expected '" + filterName + "'");
    }
    return manifest;
  }

  /**
   * Fetches and verifies the snapshot of {@code manifest}.
   *
   * @throws SnapshotVerificationException if the key type is not the requested one (checked before any
   *     chunk is fetched), a chunk is missing, or any size, digest or header check fails
   * @throws IOException if a chunk has no binary data
   * @throws io.fabric8.kubernetes.client.KubernetesClientException if the API server does not answer
   */
  LoadedSnapshot load(Manifest manifest) throws SnapshotVerificationException, IOException {
    requireKeyType(manifest, keyType);
    BloomFilterBits bits = SnapshotDecoder.decode(manifest, new ConfigMapChunks(client, namespace));
    return new LoadedSnapshot(manifest, bits);
  }

  /**
   * Refuses a snapshot of the wrong key type: hashing a Long key against String hashes (or the reverse)
   * gives answers that look plausible and are wrong.
   */
  static void requireKeyType(Manifest manifest, KeyType expected) throws SnapshotVerificationException {
    if (manifest.keyType() != expected) {
      throw new SnapshotVerificationException("snapshot v" + manifest.version() + " of '"
          + manifest.filterName() + "' holds " + manifest.keyType().crdName()
          + " keys but this filter was created for " + expected.crdName() + " keys");
    }
  }

}
