package io.bloomoperator.snapshot;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonValue;

/**
 * How keys are funnelled into the filter. Each constant hashes exactly like the matching Guava
 * funnel, so a snapshot can be read back with {@code BloomFilter.readFrom(payload,
 * keyType.guavaFunnel)}.
 */
public enum KeyType {
  /** UTF-8 strings: same bytes as {@code Funnels.stringFunnel(StandardCharsets.UTF_8)}. */
  // @JsonProperty as well as @JsonValue: the CRD generator reads enum spellings from @JsonProperty.
  @JsonProperty("String")
  STRING("String"),
  /** 64-bit signed integers: 8 bytes little-endian, same as {@code Funnels.longFunnel()}. */
  @JsonProperty("Long")
  LONG("Long");

  private final String crdName;

  KeyType(String crdName) {
    this.crdName = crdName;
  }

  /** The spelling used in the BloomFilter resource and in the manifest ("String" / "Long"). */
  @JsonValue
  public String crdName() {
    return crdName;
  }

  /**
   * Parses the resource/manifest spelling. Strict on purpose: a typo must not silently select a
   * different hashing scheme.
   *
   * @throws IllegalArgumentException for anything but "String" or "Long"
   */
  @JsonCreator
  public static KeyType fromCrdName(String value) {
    for (KeyType type : values()) {
      if (type.crdName.equals(value)) {
        return type;
      }
    }
    throw new IllegalArgumentException(
        "unknown key type '" + value + "', expected one of \"String\", \"Long\"");
  }
}
