package io.bloomoperator.watch;

import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.util.Base64;
import java.util.Map;

/**
 * Loads a snapshot's chunks from the API server one GET by name at a time (never a list: each
 * chunk holds up to 1 MB), never decoding more than the manifest announces for the chunk, for {@link SnapshotDecoder#decode(Manifest, SnapshotDecoder.ChunkSource)}.
 */
public final class ConfigMapChunks implements SnapshotDecoder.ChunkSource {

  private final KubernetesClient client;
  private final String namespace;

  public ConfigMapChunks(KubernetesClient client, String namespace) {
    this.client = client;
    this.namespace = namespace;
  }

  @Override
  public byte[] load(int index, Manifest.ChunkRef ref) throws IOException {
    ConfigMap chunk = client.configMaps().inNamespace(namespace).withName(ref.name()).get();
    if (chunk == null) {
      return null; // the decoder reports it as missing, naming the chunk
    }
    Map<String, String> binaryData = chunk.getBinaryData();
    String base64 = binaryData == null ? null : binaryData.get(SnapshotNames.CHUNK_DATA_KEY);
    if (base64 == null) {
      throw new IOException("chunk ConfigMap " + namespace + "/" + ref.name()
          + " has no binaryData key '" + SnapshotNames.CHUNK_DATA_KEY + "'");
    }
    // Checked before decoding, so a replaced chunk ConfigMap cannot make this allocate more than
    // the manifest announced (which the reader's limits already bounded).
    long expectedLength = 4L * ((ref.bytes() + 2L) / 3);
    if (base64.length() != expectedLength) {
      throw new IOException("chunk ConfigMap " + namespace + "/" + ref.name() + " holds "
          + base64.length() + " base64 characters, the manifest announces " + ref.bytes()
          + " bytes (" + expectedLength + " characters)");
    }
    try {
      return Base64.getDecoder().decode(base64);
    } catch (IllegalArgumentException e) {
      throw new IOException("chunk ConfigMap " + namespace + "/" + ref.name()
          + " is not valid base64", e);
    }
  }
}
