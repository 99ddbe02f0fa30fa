package io.bloomoperator.watch;

import java.io.IOException;
import java.util.List;
import java.util.Objects;

/**
 * An object store a reader fetches chunks from when a manifest names it, registered under that name
 * with {@link BloomFilterWatcher.Builder#objectStore(String, ObjectStore)}. Where the store is
 * (endpoint, bucket) and the credentials to read it come from the application that registers it,
 * never from a manifest. The implementation for S3-compatible stores is {@code S3ObjectStore} of
 * the optional module {@code bloom-sidecar-s3}, so that sidecar-lib itself needs no object-store
 * client.
 *
 * <p>The reader builds every object key itself (from this store's {@link #prefix()}, its own
 * namespace and filter, and each chunk's name and digest) and refuses a manifest that names a chunk
 * with no such key before anything is fetched; the store only reads the objects it is given, and
 * the reader verifies their sizes and SHA-256 digests as for ConfigMaps.
 *
 * <p>Implementations are shared by watchers and called on their watcher threads; the application
 * that creates one closes it.
 */
public interface ObjectStore {

  /** The key prefix of the store's objects (as the operator's store has it), or empty. */
  String prefix();

  /**
   * Starts reading {@code chunks}, which the reader will ask for in this order (it may skip some at
   * the start, never go back).
   *
   * @throws IOException if the store cannot be read at all (e.g. no credentials)
   */
  Download open(List<Chunk> chunks) throws IOException;

  /**
   * One object to read.
   *
   * @param key the object's key, built and checked by the reader
   * @param bytes the size the manifest announces: never read more
   */
  record Chunk(String key, int bytes) {

    /**
     * @throws IllegalArgumentException if {@code bytes} is negative
     */
    public Chunk {
      Objects.requireNonNull(key, "key");
      if (bytes < 0) {
        throw new IllegalArgumentException("bytes must not be negative");
      }
    }
  }

  /** The objects of one load; closed after it (successful or not). */
  interface Download extends AutoCloseable {

    /**
     * The bytes of chunk {@code position} of the list given to {@link #open}, exactly {@link
     * Chunk#bytes()} of them, or null if the object does not exist.
     *
     * @throws IOException if it cannot be read, or the object has another size
     */
    byte[] load(int position) throws IOException;

    /** Stops fetching and releases what is held; never throws. */
    @Override
    void close();
  }
}
