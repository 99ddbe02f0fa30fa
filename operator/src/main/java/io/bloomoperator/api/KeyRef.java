package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/** Names one key of a ConfigMap or Secret in the BloomFilter's namespace. */
public class KeyRef {

  /** A Kubernetes object name (RFC 1123 subdomain), as every reference field must be. */
  public static final String NAME_PATTERN =
      "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";

  @Required
  @Size(min = 1, max = 253)
  @Pattern(NAME_PATTERN)
  @JsonPropertyDescription("Name of the object, in the BloomFilter's namespace.")
  private String name;

  @Required
  @Size(min = 1, max = 253)
  @Pattern("^[-._a-zA-Z0-9]+$")
  @JsonPropertyDescription("The data key holding the newline-separated keys.")
  private String key;

  public KeyRef() {}

  public KeyRef(String name, String key) {
    this.name = name;
    this.key = key;
  }

  public String getName() {
    return name;
  }

  public void setName(String name) {
    this.name = name;
  }

  public String getKey() {
    return key;
  }

  public void setKey(String key) {
    this.key = key;
  }
}
