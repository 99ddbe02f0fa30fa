package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.List;

/**
 * Exactly one source of keys. The rule below is the single place in the schema that must learn
 * about a new source kind.
 */
@ValidationRule(
    value =
        "[has(self.inline), has(self.configMap), has(self.secret), has(self.http),"
            + " has(self.jdbc)].filter(x, x).size() == 1",
    message = "exactly one of inline, configMap, secret, http or jdbc must be set")
public class SourceSpec {

  @Size(max = 10000)
  @JsonPropertyDescription(
      "Keys listed in the resource itself, for small sets (at most 10000; the "
          + "whole resource must stay well under the 1.5 MiB etcd request limit).")
  private List<String> inline;

  @JsonPropertyDescription(
      "A key of a ConfigMap in the same namespace holding newline-separated "
          + "keys (blank lines and lines starting with # are skipped). Both data and binaryData keys "
          + "are read.")
  private KeyRef configMap;

  @JsonPropertyDescription(
      "A key of a Secret in the same namespace holding newline-separated keys. "
          + "The Secret must name this BloomFilter in its annotation "
          + "bloomoperator.io/allowed-filters (or \"*\").")
  private KeyRef secret;

  @JsonPropertyDescription("Newline-delimited keys downloaded over HTTP(S), plain or gzip.")
  private HttpSourceSpec http;

  @JsonPropertyDescription(
      "Keys from the first column of a SQL query (PostgreSQL, MySQL, " + "MariaDB).")
  private JdbcSourceSpec jdbc;

  public HttpSourceSpec getHttp() {
    return http;
  }

  public void setHttp(HttpSourceSpec http) {
    this.http = http;
  }

  public JdbcSourceSpec getJdbc() {
    return jdbc;
  }

  public void setJdbc(JdbcSourceSpec jdbc) {
    this.jdbc = jdbc;
  }

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
