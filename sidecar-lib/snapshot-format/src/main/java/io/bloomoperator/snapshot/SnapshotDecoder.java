package io.bloomoperator.snapshot;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;

/**
 * Reads a chunked snapshot back into a {@link BloomFilterBits}, verifying it on the way.
 *
 * <p>Chunks are pulled one at a time, so a reader holds at most its current filter, the new
 * filter's words and one chunk. For every chunk, in order: its size and SHA-256 must match the
 * manifest before a byte of it is used; the 6-byte header (wherever the chunk boundaries cut it)
 * must match the manifest's strategy, numHashFunctions and numBits; finally the SHA-256 of the
 * whole payload must match. Words are copied with bulk big-endian {@code LongBuffer} transfers; a
 * word split across two chunks is stitched from a small carry.
 *
 * <p>The words array is allocated as soon as chunk 0's header matches the manifest, i.e. at the
 * manifest's numBits: callers that read manifests written by others check them with {@link
 * SnapshotLimits#check} first, as sidecar-lib and the CLI do.
 */
public final class SnapshotDecoder {

  private SnapshotDecoder() {}

  /** Supplies chunk {@code index} (the bytes of {@code ref}), or null if it does not exist. */
  @FunctionalInterface
  public interface ChunkSource {
    byte[] load(int index, Manifest.ChunkRef ref) throws IOException;
  }

  /**
   * Decodes and verifies a snapshot, loading chunks on demand.
   *
   * @throws SnapshotVerificationException if the manifest is invalid, a chunk is missing, has the
   *     wrong size or digest, the header disagrees with the manifest, or the total digest does not
   *     match
   * @throws IOException whatever {@code source} throws
   */
  public static BloomFilterBits decode(Manifest manifest, ChunkSource source)
      throws SnapshotVerificationException, IOException {
    manifest.validate();
    BloomFilterBits base = decodeBase(manifest, source);
    if (!manifest.chained()) {
      return base;
    }
    // The base's words are ours alone (nothing serves them yet): apply the chain in place.
    return applyAndVerify(manifest, base.words(), manifest.deltas(), manifest.sha256(), source);
  }

  /** The payload {@code manifest.chunks()} hold, verified against the base's digest. */
  private static BloomFilterBits decodeBase(Manifest manifest, ChunkSource source)
      throws SnapshotVerificationException, IOException {
    List<Manifest.ChunkRef> refs = manifest.chunks();
    Verifier verifier = new Verifier(manifest);
    for (int i = 0; i < refs.size(); i++) {
      verifier.accept(i, source.load(i, refs.get(i)));
    }
    return verifier.finish();
  }

  /**
   * Decodes an earlier version that {@code manifest}'s chain still holds: its base, or the version
   * any of its deltas produces (verified against that delta's payload digest); {@code
   * manifest.version()} itself as {@link #decode(Manifest, ChunkSource)}.
   *
   * @throws SnapshotVerificationException if the chain does not hold {@code version}, or as {@link
   *     #decode(Manifest, ChunkSource)}
   * @throws IOException whatever {@code source} throws
   */
  public static BloomFilterBits decodeVersion(Manifest manifest, long version, ChunkSource source)
      throws SnapshotVerificationException, IOException {
    manifest.validate();
    if (version == manifest.version()) {
      return decode(manifest, source);
    }
    List<Manifest.Delta> deltas = manifest.deltas();
    int last = -1;
    for (int i = 0; i < deltas.size(); i++) {
      if (deltas.get(i).version() == version) {
        last = i;
      }
    }
    if (version != manifest.baseVersion() && last < 0) {
      throw new SnapshotVerificationException(
          "version "
              + version
              + " is not in the published chain, which holds versions "
              + manifest.referencedVersions());
    }
    BloomFilterBits base = decodeBase(manifest, source);
    if (last < 0) {
      return base;
    }
    return applyAndVerify(
        manifest, base.words(), deltas.subList(0, last + 1), deltas.get(last).sha256(), source);
  }

  /**
   * Loads {@code manifest}'s snapshot for a reader that holds {@code held} (the verified snapshot
   * of version {@code heldVersion} with payload digest {@code heldSha256}): when the held snapshot
   * is the chain's base or one of its versions, only the deltas after it are fetched and applied to
   * a copy of its bits ({@code held} itself never changes); otherwise, as {@link #decode(Manifest,
   * ChunkSource)}, the base and the whole chain. Either way the result's payload digest is checked
   * against the manifest before it is returned.
   *
   * @param held the snapshot served now, or null
   * @throws SnapshotVerificationException as {@link #decode(Manifest, ChunkSource)}
   * @throws IOException whatever {@code source} throws
   */
  public static BloomFilterBits update(
      Manifest manifest,
      BloomFilterBits held,
      long heldVersion,
      String heldSha256,
      ChunkSource source)
      throws SnapshotVerificationException, IOException {
    manifest.validate();
    Optional<List<Manifest.Delta>> deltas =
        held == null ? Optional.empty() : manifest.deltasAfter(heldVersion, heldSha256);
    if (deltas.isEmpty() || !manifest.describes(held)) {
      return decode(manifest, source);
    }
    return applyAndVerify(manifest, held.words().clone(), deltas.get(), manifest.sha256(), source);
  }

  private static BloomFilterBits applyAndVerify(
      Manifest manifest,
      long[] words,
      List<Manifest.Delta> deltas,
      String expectedSha256,
      ChunkSource source)
      throws SnapshotVerificationException, IOException {
    for (Manifest.Delta delta : deltas) {
      SnapshotDelta.apply(words, manifest.numHashFunctions(), delta, source);
    }
    BloomFilterBits result =
        BloomFilterBits.wrap(
            manifest.keyType(), manifest.filterFormat(), manifest.numHashFunctions(), words);
    String actual = SnapshotEncoder.sha256(result);
    if (!actual.equalsIgnoreCase(expectedSha256)) {
      throw new SnapshotVerificationException(
          "payload sha256 mismatch after applying "
              + deltas.size()
              + " delta(s): manifest says "
              + expectedSha256
              + ", computed "
              + actual);
    }
    return result;
  }

  /**
   * Reads a whole payload (of either format's version, e.g. from a local file) and checks it
   * against {@code manifest}: header against the geometry, size against {@code totalBytes}, digest
   * against {@code sha256}. Reads at most {@code totalBytes + 1} bytes.
   *
   * @throws SnapshotVerificationException if any of those checks fails
   * @throws IOException whatever {@code in} throws
   */
  public static BloomFilterBits decodeWhole(Manifest manifest, java.io.InputStream in)
      throws SnapshotVerificationException, IOException {
    manifest.validate();
    PayloadParser parser = PayloadParser.of(manifest);
    MessageDigest digest = Sha256.newDigest();
    byte[] buffer = new byte[1 << 20];
    long read = 0;
    int n;
    while ((n = in.read(buffer)) > 0) {
      read += n;
      if (read > manifest.totalBytes()) {
        throw new SnapshotVerificationException(
            "payload is longer than the " + manifest.totalBytes() + " bytes the manifest says");
      }
      digest.update(buffer, 0, n);
      parser.accept(buffer, 0, n);
    }
    BloomFilterBits bits = parser.finish();
    String actual = Sha256.hex(digest);
    if (!actual.equalsIgnoreCase(manifest.sha256())) {
      throw new SnapshotVerificationException(
          "payload sha256 mismatch: manifest says " + manifest.sha256() + ", computed " + actual);
    }
    return bits;
  }

  /**
   * Decodes and verifies a snapshot whose chunks arrive in manifest order from {@code chunks}.
   *
   * <p>For a chain, the base's chunks come first, then each delta's, in manifest order.
   *
   * @throws SnapshotVerificationException as {@link #decode(Manifest, ChunkSource)}, and also if
   *     the iterator yields fewer or more chunks than the manifest lists
   */
  public static BloomFilterBits decode(Manifest manifest, Iterator<byte[]> chunks)
      throws SnapshotVerificationException {
    // decode(manifest, source) validates the manifest before the first chunk is taken.
    int expected = manifest.chunkCount();
    try {
      BloomFilterBits bits =
          decode(manifest, (index, ref) -> chunks.hasNext() ? chunks.next() : null);
      if (chunks.hasNext()) {
        throw new SnapshotVerificationException(
            "more chunks supplied than the " + expected + " the manifest lists");
      }
      return bits;
    } catch (IOException e) {
      throw new IllegalStateException("an iterator source does not throw IOException", e);
    }
  }

  /**
   * Parses a whole Guava {@code writeTo} payload without any manifest or digest checks (for tools,
   * tests and benchmarks; readers of published snapshots use {@link #decode}).
   *
   * @throws SnapshotVerificationException if the payload is not a well-formed MURMUR128_MITZ_64
   *     filter
   */
  public static BloomFilterBits decodePayload(byte[] payload, KeyType keyType)
      throws SnapshotVerificationException {
    if (payload.length < SnapshotEncoder.HEADER_BYTES + Long.BYTES) {
      throw new SnapshotVerificationException(
          "payload is " + payload.length + " bytes, too short for a header and one word");
    }
    ByteBuffer header = ByteBuffer.wrap(payload, 0, SnapshotEncoder.HEADER_BYTES);
    int strategy = header.get() & 0xFF;
    int k = header.get() & 0xFF;
    int numLongs = header.getInt();
    long expectedLength = SnapshotEncoder.HEADER_BYTES + (long) numLongs * Long.BYTES;
    if (numLongs < 1 || payload.length != expectedLength) {
      throw new SnapshotVerificationException(
          "header says "
              + numLongs
              + " words ("
              + expectedLength
              + " bytes) but the payload is "
              + payload.length
              + " bytes");
    }
    PayloadParser parser = new PayloadParser(keyType, FilterFormat.GUAVA, strategy, k, numLongs);
    parser.accept(payload, 0, payload.length);
    return parser.finish();
  }

  /**
   * Parses a whole payload of either layout without any manifest or digest checks: {@link
   * #decodePayload(byte[], KeyType)} for {@link FilterFormat#GUAVA}; for {@link
   * FilterFormat#SPLIT_BLOCK} the payload is Parquet's bitset, whole 32-byte blocks.
   *
   * @throws SnapshotVerificationException if the payload is not well-formed for the layout
   */
  public static BloomFilterBits decodePayload(byte[] payload, KeyType keyType, FilterFormat format)
      throws SnapshotVerificationException {
    if (format == FilterFormat.GUAVA) {
      return decodePayload(payload, keyType);
    }
    if (payload.length == 0
        || payload.length % SplitBlockSizing.BYTES_PER_BLOCK != 0
        || payload.length / SplitBlockSizing.BYTES_PER_BLOCK > SplitBlockSizing.MAX_BLOCKS) {
      throw new SnapshotVerificationException(
          "a split-block payload is whole 32-byte blocks, this one is "
              + payload.length
              + " bytes");
    }
    PayloadParser parser =
        new PayloadParser(
            keyType,
            FilterFormat.SPLIT_BLOCK,
            0,
            FilterFormat.SPLIT_BLOCK_BITS_PER_KEY,
            payload.length / Long.BYTES);
    parser.accept(payload, 0, payload.length);
    return parser.finish();
  }

  /** One daemon thread for total digests, shared by all decoders and file writers of the JVM. */
  static final Executor DIGESTS =
      Executors.newSingleThreadExecutor(
          r -> {
            Thread t = new Thread(r, "bloom-snapshot-digest");
            t.setDaemon(true);
            return t;
          });

  /** Checks chunk sizes and digests against the manifest and feeds verified bytes to the parser. */
  private static final class Verifier {
    private final Manifest manifest;
    private final PayloadParser parser;
    private final MessageDigest chunkDigest = Sha256.newDigest();
    private final MessageDigest totalDigest = Sha256.newDigest();

    Verifier(Manifest manifest) {
      this.manifest = manifest;
      this.parser = PayloadParser.of(manifest);
    }

    void accept(int index, byte[] data) throws SnapshotVerificationException {
      Manifest.ChunkRef ref = manifest.chunks().get(index);
      String where = "chunk " + index + " ('" + ref.name() + "')";
      ChunkCheck.requireSize(ref, data, where, index);
      // The total digest runs on another core while this one checks the chunk's own digest and
      // decodes it: SHA-256 dominates a verified load, and both passes read the same array.
      // Waiting for it before returning keeps at most one chunk in flight.
      CompletableFuture<Void> total =
          CompletableFuture.runAsync(() -> totalDigest.update(data), DIGESTS);
      try {
        ChunkCheck.requireDigest(ref, data, where, index, chunkDigest);
        try {
          parser.accept(data, 0, data.length);
        } catch (SnapshotVerificationException e) {
          throw new SnapshotVerificationException(where + ": " + e.getMessage(), index);
        }
      } finally {
        total.join();
      }
    }

    BloomFilterBits finish() throws SnapshotVerificationException {
      String actual = Sha256.hex(totalDigest);
      // For a chain these chunks are the base: check them against the base's digest.
      if (!actual.equalsIgnoreCase(manifest.baseSha256())) {
        throw new SnapshotVerificationException(
            (manifest.chained() ? "base v" + manifest.baseVersion() + " " : "")
                + "payload sha256 mismatch: manifest says "
                + manifest.baseSha256()
                + ", computed "
                + actual
                + " over all "
                + manifest.chunks().size()
                + " chunks");
      }
      return parser.finish();
    }
  }

  /**
   * Streams payload bytes, in any split, into a word array. The header is checked against what the
   * caller expects before the (possibly large) word array is allocated.
   */
  private static final class PayloadParser {
    private final KeyType keyType;
    private final FilterFormat format;
    private final ByteOrder order;
    private final int expectedStrategy;
    private final int expectedK;
    private final int expectedNumLongs;

    private final byte[] header;
    private int headerFilled;
    private long[] words;
    private int wordCount;
    private long carry; // bytes of a word split across chunks, in payload order
    private int carryBytes;

    PayloadParser(
        KeyType keyType,
        FilterFormat format,
        int expectedStrategy,
        int expectedK,
        int expectedNumLongs) {
      this.keyType = keyType;
      this.format = format;
      this.order = SnapshotEncoder.wordOrder(format);
      this.expectedStrategy = expectedStrategy;
      this.expectedK = expectedK;
      this.expectedNumLongs = expectedNumLongs;
      this.header = new byte[format.headerBytes()];
      if (header.length == 0) {
        // No header to check: the size comes from a manifest the caller has checked, or from the
        // length of a payload already in memory.
        words = new long[expectedNumLongs];
      }
    }

    /** The parser for a (validated) manifest's base payload. */
    static PayloadParser of(Manifest manifest) {
      return new PayloadParser(
          manifest.keyType(),
          manifest.filterFormat(),
          SnapshotEncoder.STRATEGY_MURMUR128_MITZ_64,
          manifest.numHashFunctions(),
          manifest.numLongs());
    }

    void accept(byte[] data, int offset, int length) throws SnapshotVerificationException {
      int pos = offset;
      int end = offset + length;
      while (headerFilled < header.length && pos < end) {
        header[headerFilled++] = data[pos++];
        if (headerFilled == header.length) {
          checkHeader();
        }
      }
      if (pos == end) {
        return;
      }
      if (carryBytes > 0) {
        while (carryBytes < Long.BYTES && pos < end) {
          carry = (carry << 8) | (data[pos++] & 0xFF);
          carryBytes++;
        }
        if (carryBytes < Long.BYTES) {
          return;
        }
        storeWords(1);
        words[wordCount++] = order == ByteOrder.BIG_ENDIAN ? carry : Long.reverseBytes(carry);
        carry = 0;
        carryBytes = 0;
      }
      int count = (end - pos) / Long.BYTES;
      if (count > 0) {
        storeWords(count);
        // Bulk big-endian copy (an intrinsic byte-swapping memcpy), not DataInputStream's 8
        // reads/word.
        ByteBuffer.wrap(data, pos, count * Long.BYTES)
            .order(order)
            .asLongBuffer()
            .get(words, wordCount, count);
        wordCount += count;
        pos += count * Long.BYTES;
      }
      while (pos < end) {
        carry = (carry << 8) | (data[pos++] & 0xFF);
        carryBytes++;
      }
    }

    BloomFilterBits finish() throws SnapshotVerificationException {
      if (headerFilled < header.length) {
        throw new SnapshotVerificationException(
            "payload ended after "
                + headerFilled
                + " bytes, inside the "
                + header.length
                + "-byte header");
      }
      if (wordCount != expectedNumLongs || carryBytes != 0) {
        throw new SnapshotVerificationException(
            "payload ended after "
                + wordCount
                + " words and "
                + carryBytes
                + " bytes, expected "
                + expectedNumLongs
                + " words");
      }
      return BloomFilterBits.wrap(keyType, format, expectedK, words);
    }

    private void checkHeader() throws SnapshotVerificationException {
      ByteBuffer h = ByteBuffer.wrap(header);
      int strategy = h.get() & 0xFF;
      int k = h.get() & 0xFF;
      int numLongs = h.getInt();
      if (strategy != expectedStrategy) {
        throw new SnapshotVerificationException(
            "header strategy ordinal is "
                + strategy
                + ", expected "
                + expectedStrategy
                + " (MURMUR128_MITZ_64)");
      }
      if (k != expectedK) {
        throw new SnapshotVerificationException(
            "header numHashFunctions is " + k + " but the manifest says " + expectedK);
      }
      if (numLongs != expectedNumLongs) {
        throw new SnapshotVerificationException(
            "header numLongs is "
                + numLongs
                + " ("
                + ((long) numLongs * Long.SIZE)
                + " bits) but the manifest says "
                + expectedNumLongs
                + " ("
                + ((long) expectedNumLongs * Long.SIZE)
                + " bits)");
      }
      if (k < 1) {
        throw new SnapshotVerificationException("header numHashFunctions is 0");
      }
      words = new long[numLongs];
    }

    private void storeWords(int count) throws SnapshotVerificationException {
      if (count > words.length - wordCount) {
        throw new SnapshotVerificationException(
            "payload is longer than the " + words.length + " words its header announces");
      }
    }
  }
}
