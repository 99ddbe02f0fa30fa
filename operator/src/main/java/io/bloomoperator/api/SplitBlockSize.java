package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonValue;

/**
 * How a split-block filter's block count is chosen ({@code spec.splitBlockSize}).
 *
 * <p>Some readers of Parquet Bloom filters accept only bitsets whose size is a power of two, up to
 * 128 MiB (Arrow C++, and so pyarrow and Velox); {@link #POWER_OF_TWO} publishes such a bitset, at
 * the cost of up to twice the bytes {@link #FIT} needs for the same keys and rate.
 */
public enum SplitBlockSize {
  /** As many blocks as the keys need at the target rate (the default). */
  // @JsonProperty as well as @JsonValue: the CRD generator reads enum spellings from @JsonProperty.
  @JsonProperty("Fit")
  FIT("Fit"),
  /** The block count rounded up to a power of two; at most 128 MiB (2^22 blocks). */
  @JsonProperty("PowerOfTwo")
  POWER_OF_TWO("PowerOfTwo");

  /** The most blocks {@link #POWER_OF_TWO} publishes: 128 MiB, the readers' own limit. */
  public static final long MAX_POWER_OF_TWO_BLOCKS = 1L << 22;

  private final String crdName;

  SplitBlockSize(String crdName) {
    this.crdName = crdName;
  }

  /** The spelling in the CRD. */
  @JsonValue
  public String crdName() {
    return crdName;
  }
}
