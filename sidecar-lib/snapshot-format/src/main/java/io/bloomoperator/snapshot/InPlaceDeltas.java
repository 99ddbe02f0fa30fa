package io.bloomoperator.snapshot;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The deltas after a reader's served version, fetched, verified and parsed into bit positions
 * before anything is applied, so that a reader can turn the served filter into the new version
 * <em>in place</em>, in time proportional to the deltas, when they only turn bits on.
 *
 * <p>A change stream publishes a delta every second or two, each adding a few thousand keys. The
 * swap path ({@link SnapshotDecoder#update}) copies the whole bit array and hashes the whole
 * payload for each of them: 1.3 GB and seconds of CPU at 1B keys. Between full builds a stream only
 * adds keys, so every bit a delta flips is 0 in the version it applies to; such a delta is applied
 * to the served array itself, with one atomic OR per changed word ({@link #setBits}). Lookups
 * running meanwhile see each bit either as it was or as it will be, both of which are correct
 * answers: a key of the older version keeps all its bits set throughout, a key of the newer one is
 * answered "absent" only until its last bit is set. Lookups read words with plain loads; such a
 * load may tear into two 32-bit halves on a JVM that does not read longs atomically, but with bits
 * only ever turned on each half is itself the old or the new value of its bits.
 *
 * <p>Order of the checks, all before the first bit is set: every chunk of every delta after the
 * held version is fetched and its size and SHA-256 checked against the manifest (whose signature
 * the reader checked before fetching anything) before a byte of it is parsed; each delta's header
 * must match the geometry and its count of positions; all positions must be in range. Then {@link
 * #addOnly} tells whether every position is 0 in the held filter and no position comes twice (a
 * position in two deltas of a chain would be turned on and off again). A delta that clears a bit
 * (counting deletions, a rollback) is applied to a copy instead ({@link #applyToCopy}), whose
 * payload SHA-256 is checked as on the swap path, without fetching the chunks again.
 *
 * <p>What is <em>not</em> checked here: the SHA-256 of the whole payload a delta produces. Hashing
 * it is exactly the cost removed, and an array that lookups may see change cannot be hashed while
 * it changes; the reader checks it on a copy taken between two deltas, at a bounded rate
 * (docs/snapshot-protocol.md, "Reading").
 *
 * <p>Memory: the positions, 8 bytes per changed bit, at most {@link #MAX_POSITIONS} and never more
 * than the copy of the words they replace; a chain of more is not considered ({@link #fetch}
 * returns empty before fetching anything).
 */
public final class InPlaceDeltas {

  /** The most changed bits held as positions: 32 MiB of them. */
  public static final long MAX_POSITIONS = 1L << 22;

  private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class);

  private final Manifest manifest;
  private final BloomFilterBits held;
  private final long[] positions; // sorted
  private final int deltaCount;

  private InPlaceDeltas(Manifest manifest, BloomFilterBits held, long[] positions, int deltaCount) {
    this.manifest = manifest;
    this.held = held;
    this.positions = positions;
    this.deltaCount = deltaCount;
  }

  /**
   * Fetches and verifies the deltas of {@code manifest} after {@code held} (the verified snapshot
   * of version {@code heldVersion} with payload digest {@code heldSha256}, as on the swap path), or
   * empty, before fetching anything, when the manifest alone rules the in-place path out: {@code
   * held} is not a version of its chain or has another geometry; a delta changes no bit (the
   * operator republishes a retained version, a pin or a withdrawn canary, as an empty delta on its
   * chain: such a version is swapped in, never written into the served array); or the deltas change
   * more than {@link #MAX_POSITIONS} bits, or more bits than the filter has words.
   *
   * @throws SnapshotVerificationException if a chunk is missing, has the wrong size or digest, or a
   *     delta is malformed or does not fit the geometry; nothing was applied anywhere
   * @throws IOException whatever {@code source} throws
   */
  public static Optional<InPlaceDeltas> fetch(
      Manifest manifest,
      BloomFilterBits held,
      long heldVersion,
      String heldSha256,
      SnapshotDecoder.ChunkSource source)
      throws SnapshotVerificationException, IOException {
    manifest.validate();
    if (held == null || !manifest.describes(held)) {
      return Optional.empty();
    }
    Optional<List<Manifest.Delta>> after = manifest.deltasAfter(heldVersion, heldSha256);
    if (after.isEmpty() || after.get().isEmpty()) {
      return Optional.empty();
    }
    List<Manifest.Delta> deltas = after.get();
    long total = 0;
    for (Manifest.Delta delta : deltas) {
      if (delta.changedBits() <= 0) {
        return Optional.empty();
      }
      total += delta.changedBits(); // each is bounded by the validated manifest: no overflow
      if (total > Math.min(MAX_POSITIONS, held.numLongs())) {
        return Optional.empty();
      }
    }
    long[] positions = new long[(int) total];
    int[] filled = {0};
    for (Manifest.Delta delta : deltas) {
      // Each delta's parser refuses more positions than its header (equal to the manifest's
      // changedBits) announces, so the array cannot overflow.
      SnapshotDelta.apply(
          position -> positions[filled[0]++] = position,
          held.numLongs(),
          manifest.numHashFunctions(),
          delta,
          source);
    }
    // Each delta's positions are sorted; several deltas' are concatenated runs.
    if (deltas.size() > 1) {
      Arrays.sort(positions);
    }
    return Optional.of(new InPlaceDeltas(manifest, held, positions, deltas.size()));
  }

  /**
   * Whether every changed bit is 0 in the held filter and none changes twice: the deltas only turn
   * bits on, so {@link #setBits} gives exactly the payload they describe. Reads the held words;
   * call it on the one thread that may change them.
   */
  public boolean addOnly() {
    long[] words = held.words();
    long previous = -1;
    for (long position : positions) {
      if (position == previous || (words[(int) (position >>> 6)] & (1L << position)) != 0) {
        return false;
      }
      previous = position;
    }
    return true;
  }

  /**
   * Turns the changed bits on in the held filter's own words, with an atomic OR per changed word
   * (bits of one word together), so that a concurrent lookup sees each bit old or new and never a
   * word assembled from stale parts. Only for {@link #addOnly} deltas, on the one thread that
   * changes the held filter; afterwards the held filter answers for {@code manifest}'s version. The
   * OR's volatile semantics, and the reader's volatile publication of the new version after it,
   * make every bit visible to a lookup that sees the new version.
   *
   * @throws IllegalStateException if the deltas are not add-only (checked again: a bit cleared in
   *     place would be a false negative for every key that set it)
   */
  public void setBits() {
    if (!addOnly()) {
      throw new IllegalStateException("deltas that clear bits are applied to a copy");
    }
    long[] words = held.words();
    int i = 0;
    while (i < positions.length) {
      int word = (int) (positions[i] >>> 6);
      long mask = 0;
      while (i < positions.length && (int) (positions[i] >>> 6) == word) {
        mask |= 1L << positions[i];
        i++;
      }
      WORDS.getAndBitwiseOr(words, word, mask);
    }
  }

  /**
   * The new version as a new filter: a copy of the held words with every changed bit flipped (the
   * order of flips does not matter, so a chain's positions are flipped together), checked against
   * the manifest's payload SHA-256 exactly as the swap path checks it. For deltas that are not
   * {@link #addOnly}; the held filter never changes.
   *
   * @throws SnapshotVerificationException if the result's SHA-256 is not the manifest's
   */
  public BloomFilterBits applyToCopy() throws SnapshotVerificationException {
    long[] words = held.words().clone();
    for (long position : positions) {
      words[(int) (position >>> 6)] ^= 1L << position;
    }
    BloomFilterBits result =
        BloomFilterBits.wrap(
            manifest.keyType(), manifest.filterFormat(), manifest.numHashFunctions(), words);
    String actual = SnapshotEncoder.sha256(result);
    if (!actual.equalsIgnoreCase(manifest.sha256())) {
      throw new SnapshotVerificationException(
          "payload sha256 mismatch after applying "
              + deltaCount
              + " delta(s): manifest says "
              + manifest.sha256()
              + ", computed "
              + actual);
    }
    return result;
  }

  /** How many deltas these are (more than one when the reader was behind by several). */
  public int deltas() {
    return deltaCount;
  }

  /** How many bits they change in all. */
  public int changedBits() {
    return positions.length;
  }

  /**
   * A copy of {@code bits} that nothing changes: what a reader hashes to check the payload of a
   * filter it changes in place. Take it on the one thread that changes {@code bits}, between two
   * {@link #setBits} calls, so that it is exactly one version.
   */
  public static BloomFilterBits stableCopy(BloomFilterBits bits) {
    return BloomFilterBits.wrap(
        bits.keyType(), bits.format(), bits.numHashFunctions(), bits.words().clone());
  }
}
