package io.bloomoperator.snapshot;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonValue;

/**
 * How a filter's bits are laid out and serialised. Chosen per BloomFilter ({@code spec.format});
 * the manifest records it in its {@code format} id, so a reader that does not know a layout refuses
 * the manifest instead of misreading its bits.
 */
public enum FilterFormat {
  /**
   * Guava's layout (MURMUR128_MITZ_64, k bits anywhere in the array); the payload is exactly {@code
   * BloomFilter.writeTo}'s bytes. Manifest formats {@link Manifest#FORMAT} and {@link
   * Manifest#FORMAT_CHAIN}.
   */
  // @JsonProperty as well as @JsonValue: the CRD generator reads enum spellings from @JsonProperty.
  @JsonProperty("Guava")
  GUAVA("Guava", Manifest.FORMAT, Manifest.FORMAT_CHAIN, SnapshotEncoder.HEADER_BYTES),
  /**
   * Apache Parquet's split-block layout ({@link SplitBlockBits}): one 32-byte block per key, so a
   * lookup touches one cache line; the payload is exactly Parquet's bitset (no header). Manifest
   * formats {@link Manifest#FORMAT_SPLIT_BLOCK} and {@link Manifest#FORMAT_SPLIT_BLOCK_CHAIN}.
   */
  @JsonProperty("SplitBlock")
  SPLIT_BLOCK("SplitBlock", Manifest.FORMAT_SPLIT_BLOCK, Manifest.FORMAT_SPLIT_BLOCK_CHAIN, 0);

  /** k of a split-block filter: one bit in each of a block's eight 32-bit words. */
  public static final int SPLIT_BLOCK_BITS_PER_KEY = 8;

  private final String crdName;
  private final String wholeFormat;
  private final String chainFormat;
  private final int headerBytes;

  FilterFormat(String crdName, String wholeFormat, String chainFormat, int headerBytes) {
    this.crdName = crdName;
    this.wholeFormat = wholeFormat;
    this.chainFormat = chainFormat;
    this.headerBytes = headerBytes;
  }

  /** The spelling in the BloomFilter resource ("Guava" / "SplitBlock"). */
  @JsonValue
  public String crdName() {
    return crdName;
  }

  /**
   * Parses the resource spelling; strict, so a typo cannot select another layout.
   *
   * @throws IllegalArgumentException for anything but "Guava" or "SplitBlock"
   */
  @JsonCreator
  public static FilterFormat fromCrdName(String value) {
    for (FilterFormat format : values()) {
      if (format.crdName.equals(value)) {
        return format;
      }
    }
    throw new IllegalArgumentException(
        "unknown filter format '" + value + "', expected one of \"Guava\", \"SplitBlock\"");
  }

  /** The manifest {@code format} id of a whole snapshot in this layout. */
  public String manifestFormat() {
    return wholeFormat;
  }

  /** The manifest {@code format} id of a base plus deltas in this layout. */
  public String chainManifestFormat() {
    return chainFormat;
  }

  /** Bytes of the payload before the bit array: Guava's 6-byte header, none for split-block. */
  public int headerBytes() {
    return headerBytes;
  }

  /** The payload size of a filter of {@code numBits} bits in this layout. */
  public long payloadBytes(long numBits) {
    return headerBytes + numBits / Byte.SIZE;
  }

  /** The layout a manifest {@code format} id names, or null if this reader does not know it. */
  public static FilterFormat ofManifestFormat(String format) {
    for (FilterFormat candidate : values()) {
      if (candidate.wholeFormat.equals(format) || candidate.chainFormat.equals(format)) {
        return candidate;
      }
    }
    return null;
  }

  /** Whether {@code format} is the chain id of its layout. */
  static boolean isChainFormat(String format) {
    for (FilterFormat candidate : values()) {
      if (candidate.chainFormat.equals(format)) {
        return true;
      }
    }
    return false;
  }
}
