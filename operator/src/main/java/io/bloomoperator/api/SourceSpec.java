package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.List;

/**
 * Exactly one source of keys. The rule below is the single place that must learn about a new
 * source kind (HTTP, JDBC) when one is added.
 */
@ValidationRule(value = "[has(self.inline), has(self.configMap), has(self.secret)]"
    + ".filter(x, x).size() == 1",
    message = "exactly one of inline, configMap or secret must be set")
public class SourceSpec {

  @Size(max = 10000)
  @JsonPropertyDescription("Keys listed in the resource itself, for small sets (at most 10000; the "
      + "whole resource must stay well under the 1.5 MiB etcd request limit).")
  private List<String> inline;

  @JsonPropertyDescription("A key of a ConfigMap in the same namespace holding newline-separated "
      + "keys (blank lines and lines starting with # are skipped). Both data and binaryData keys "
      + "are read.")
  private KeyRef configMap;

  @JsonPropertyDescription("A key of a Secret in the same namespace holding newline-separated keys.")
  private KeyRef secret;

  public List<String> getInline() {
    return inline;
  }

  public void setInline(List<String> inline) {
    this.inline = inline;
  }

  public KeyRef getConfigMap() {
    return configMap;
  }

  public void setConfigMap(KeyRef configMap) {
    this.configMap = configMap;
  }

  public KeyRef getSecret() {
    return secret;
  }

  public void setSecret(KeyRef secret) {
    this.secret = secret;
  }
}
