package io.bloomoperator.watch;

import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;

/**
 * Loads a snapshot's chunks from the API server one GET by name at a time (never a list: each chunk
 * holds up to 1 MB), never decoding more than the manifest announces for the chunk, for {@link
 * SnapshotDecoder#decode(Manifest, SnapshotDecoder.ChunkSource)}; the reading itself is {@link
 * SnapshotConfigMaps#chunkSource}.
 */
public final class ConfigMapChunks implements SnapshotDecoder.ChunkSource {

  private final SnapshotDecoder.ChunkSource chunks;

  public ConfigMapChunks(KubernetesClient client, String namespace) {
    this.chunks = SnapshotConfigMaps.chunkSource(client, namespace);
  }

  @Override
  public byte[] load(int index, Manifest.ChunkRef ref) throws IOException {
    return chunks.load(index, ref);
  }
}
