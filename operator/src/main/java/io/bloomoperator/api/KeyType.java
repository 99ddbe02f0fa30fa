package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonProperty;

/** Key encodings, spelled in the resource as Kubernetes enums are: CamelCase words. */
public enum KeyType {
  /** UTF-8 strings. */
  @JsonProperty("String")
  STRING,
  /** 64-bit signed integers, written in decimal in text sources. */
  @JsonProperty("Long")
  LONG
}
