package io.bloomoperator.watch;

import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotRefusedException;
import io.bloomoperator.snapshot.StoreObjectKeys;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The chunks of one manifest in an {@link ObjectStore}, as the decoder asks for them: every object
 * key is built with {@link StoreObjectKeys} from the store's prefix and this reader's own namespace
 * and filter before anything is fetched, so a manifest cannot point the reader at another filter's
 * or namespace's objects, nor at any key outside the filter's directory.
 */
final class StoreChunkSource implements SnapshotDecoder.ChunkSource, AutoCloseable {

  private final Map<Manifest.ChunkRef, Integer> positions;
  private final ObjectStore.Download download;

  private StoreChunkSource(
      Map<Manifest.ChunkRef, Integer> positions, ObjectStore.Download download) {
    this.positions = positions;
    this.download = download;
  }

  /**
   * Opens the chunks of {@code manifest} (the base's, then each delta's) in {@code store}.
   *
   * @throws SnapshotRefusedException ({@code FOREIGN_CHUNK}) if a chunk name or digest has no key
   *     in the filter's directory: nothing is fetched then
   * @throws IOException if the store cannot be opened
   */
  static StoreChunkSource open(
      ObjectStore store, String namespace, String filterName, Manifest manifest)
      throws SnapshotRefusedException, IOException {
    List<Manifest.ChunkRef> refs = new ArrayList<>(manifest.chunks());
    manifest.deltas().forEach(delta -> refs.addAll(delta.chunks()));
    String directory = StoreObjectKeys.filterDirectory(store.prefix(), namespace, filterName);
    List<ObjectStore.Chunk> chunks = new ArrayList<>(refs.size());
    Map<Manifest.ChunkRef, Integer> positions = new HashMap<>();
    for (int i = 0; i < refs.size(); i++) {
      Manifest.ChunkRef ref = refs.get(i);
      try {
        chunks.add(
            new ObjectStore.Chunk(
                StoreObjectKeys.key(directory, ref.name(), ref.sha256()), ref.bytes()));
      } catch (IllegalArgumentException e) {
        // Not quoted: the name is whatever the manifest's writer put there.
        throw new SnapshotRefusedException(
            LoadFailureReason.FOREIGN_CHUNK,
            "manifest of '"
                + filterName
                + "' v"
                + manifest.version()
                + ": chunk "
                + i
                + " has no object key in the filter's directory ("
                + e.getMessage()
                + ")");
      }
      positions.putIfAbsent(ref, i);
    }
    return new StoreChunkSource(positions, store.open(List.copyOf(chunks)));
  }

  @Override
  public byte[] load(int index, Manifest.ChunkRef ref) throws IOException {
    Integer position = positions.get(ref);
    if (position == null) {
      throw new IOException("chunk " + index + " is not one the manifest lists");
    }
    return download.load(position);
  }

  @Override
  public void close() {
    download.close();
  }
}
