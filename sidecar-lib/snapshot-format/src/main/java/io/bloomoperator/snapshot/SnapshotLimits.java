package io.bloomoperator.snapshot;

import java.util.List;

/**
 * What a reader accepts from a manifest before it fetches a chunk or allocates the filter: a total
 * size it can hold twice (the served filter and the one being loaded), deltas adding up to no more
 * than that size, a bounded number of chunks, chunks no larger than a ConfigMap can hold, and only
 * the filter's own chunk names.
 *
 * @param maxTotalBytes largest payload ({@code totalBytes}, i.e. 6 + numBits / 8) accepted
 * @param maxChunks largest number of chunks accepted
 */
public record SnapshotLimits(long maxTotalBytes, int maxChunks) {

  /**
   * A chunk is the {@code binaryData} of one ConfigMap, which the API server limits to 1 MiB; a
   * manifest announcing a larger chunk is refused, which also bounds what one chunk GET decodes.
   */
  public static final int MAX_CHUNK_BYTES = 1024 * 1024;

  /**
   * Default chunk count limit. A manifest ConfigMap (1 MiB) cannot list many more chunks than this,
   * so no snapshot the operator can publish reaches it.
   */
  public static final int DEFAULT_MAX_CHUNKS = 10_000;

  /** The largest payload the format can describe (Integer.MAX_VALUE words plus the header). */
  public static final long FORMAT_MAX_BYTES =
      SnapshotEncoder.HEADER_BYTES + BloomFilterSizing.MAX_BITS / Byte.SIZE;

  /**
   * @throws IllegalArgumentException if a limit is not positive
   */
  public SnapshotLimits {
    if (maxTotalBytes < 1 || maxChunks < 1) {
      throw new IllegalArgumentException(
          "limits must be positive, got maxTotalBytes "
              + maxTotalBytes
              + ", maxChunks "
              + maxChunks);
    }
  }

  /**
   * A quarter of the heap this JVM may grow to ({@code Runtime.maxMemory()}), so the served filter
   * and a new one together take at most half of it; {@link #DEFAULT_MAX_CHUNKS} chunks.
   */
  public static SnapshotLimits forThisHeap() {
    return forHeap(Runtime.getRuntime().maxMemory());
  }

  /** A quarter of {@code maxHeapBytes} (at most {@link #FORMAT_MAX_BYTES}); default chunk count. */
  public static SnapshotLimits forHeap(long maxHeapBytes) {
    return new SnapshotLimits(
        Math.max(1, Math.min(FORMAT_MAX_BYTES, maxHeapBytes / 4)), DEFAULT_MAX_CHUNKS);
  }

  /** The same chunk count limit with another total size limit. */
  public SnapshotLimits withMaxTotalBytes(long bytes) {
    return new SnapshotLimits(bytes, maxChunks);
  }

  /** The same size limit with another chunk count limit. */
  public SnapshotLimits withMaxChunks(int chunks) {
    return new SnapshotLimits(maxTotalBytes, chunks);
  }

  /**
   * Checks a {@linkplain Manifest#validate() valid} manifest of filter {@code filterName} against
   * these limits. Only arithmetic on the manifest: nothing is fetched or allocated.
   *
   * @throws SnapshotRefusedException with reason {@link LoadFailureReason#WRONG_FILTER} if the
   *     manifest is for another filter, {@link LoadFailureReason#TOO_LARGE} if its size, chunk
   *     count or a chunk's size exceeds the limits, {@link LoadFailureReason#FOREIGN_CHUNK} if a
   *     chunk name is not {@link SnapshotNames#chunkName(String, long, int)} of this filter,
   *     version and index
   */
  public void check(Manifest manifest, String filterName) throws SnapshotRefusedException {
    String what = "manifest of '" + manifest.filterName() + "' v" + manifest.version();
    if (!filterName.equals(manifest.filterName())) {
      throw new SnapshotRefusedException(
          LoadFailureReason.WRONG_FILTER,
          what + " is for filter '" + manifest.filterName() + "', expected '" + filterName + "'");
    }
    if (manifest.totalBytes() > maxTotalBytes || manifest.numBits() / Byte.SIZE > maxTotalBytes) {
      throw new SnapshotRefusedException(
          LoadFailureReason.TOO_LARGE,
          what
              + " announces "
              + manifest.totalBytes()
              + " bytes (numBits "
              + manifest.numBits()
              + "), more than this reader's limit of "
              + maxTotalBytes
              + " bytes");
    }
    // Deltas are streamed (one chunk at a time), but each byte is downloaded and digested: a chain
    // may not cost more than the reader accepts for a whole filter.
    if (manifest.deltaBytes() > maxTotalBytes) {
      throw new SnapshotRefusedException(
          LoadFailureReason.TOO_LARGE,
          what
              + " chains "
              + manifest.deltaBytes()
              + " bytes of deltas, more than this reader's limit of "
              + maxTotalBytes
              + " bytes");
    }
    int chunkCount = manifest.chunkCount();
    if (chunkCount > maxChunks) {
      throw new SnapshotRefusedException(
          LoadFailureReason.TOO_LARGE,
          what + " lists " + chunkCount + " chunks, more than this reader's limit of " + maxChunks);
    }
    checkChunks(
        what,
        "chunk ",
        manifest.chunks(),
        i -> SnapshotNames.chunkName(filterName, manifest.baseVersion(), i));
    for (Manifest.Delta delta : manifest.deltas()) {
      checkChunks(
          what,
          "delta v" + delta.version() + " chunk ",
          delta.chunks(),
          i -> SnapshotNames.deltaChunkName(filterName, delta.version(), i));
    }
  }

  /** Each chunk fits a ConfigMap and has the canonical name of its filter, version and index. */
  private static void checkChunks(
      String what,
      String label,
      List<Manifest.ChunkRef> chunks,
      java.util.function.IntFunction<String> canonicalName)
      throws SnapshotRefusedException {
    for (int i = 0; i < chunks.size(); i++) {
      Manifest.ChunkRef chunk = chunks.get(i);
      if (chunk.bytes() > MAX_CHUNK_BYTES) {
        throw new SnapshotRefusedException(
            LoadFailureReason.TOO_LARGE,
            what
                + ": "
                + label
                + i
                + " announces "
                + chunk.bytes()
                + " bytes, more than a ConfigMap holds ("
                + MAX_CHUNK_BYTES
                + ")");
      }
      String expected = canonicalName.apply(i);
      if (!expected.equals(chunk.name())) {
        throw new SnapshotRefusedException(
            LoadFailureReason.FOREIGN_CHUNK,
            what
                + ": "
                + label
                + i
                + " is named '"
                + chunk.name()
                + "', expected '"
                + expected
                + "'");
      }
    }
  }
}
