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

  /** Most keys {@code inline} may list. */
  public static final int MAX_INLINE_KEYS = 10_000;

  /**
   * Most characters of one inline key. With {@link #MAX_INLINE_KEYS}: 640,000 characters, about 670
   * KB of JSON, so that a resource with the most keys plus the most annotations the API server
   * allows (256 KiB) and its status stays well under etcd's 1.5 MiB request limit, and every write
   * of it (a status write stores the whole object) costs at most about 1 MB. 64 fits a SHA-256 in
   * hex, UUIDs and most identifiers; longer keys belong in a ConfigMap source. Characters that JSON
   * escapes (control characters, and {@code <>&} as the API server writes them) take up to 6 bytes:
   * the operator charges status writes at the encoded size, whatever the keys are.
   */
  public static final int MAX_INLINE_KEY_LENGTH = 64;

  @Size(max = MAX_INLINE_KEYS)
  @JsonPropertyDescription(
      "Keys listed in the resource itself, for small sets: at most 10000 keys of at most 64"
          + " characters each (longer keys: use a ConfigMap source), so that the resource stays"
          + " well under the 1.5 MiB etcd request limit.")
  private List<@Size(max = MAX_INLINE_KEY_LENGTH) String> inline;

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
