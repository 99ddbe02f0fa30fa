package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/** Keys from the first column of a SQL query, streamed with a cursor. */
public class JdbcSourceSpec {

  /** The shape {@code JdbcUrl} checks in full; the schema refuses the obvious misfits early. */
  static final String URL_PATTERN =
      "^jdbc:(postgresql|mysql|mariadb)://[A-Za-z0-9.:\\[\\]-]+"
          + "(/[A-Za-z0-9_$.-]*)?([?][A-Za-z0-9=&,._$-]*)?$";

  @Required
  @Pattern(URL_PATTERN)
  @Size(max = 2048)
  @JsonPropertyDescription(
      "JDBC URL jdbc:<postgresql|mysql|mariadb>://host[:port][/database]"
          + "[?parameters]: one host, no credentials, only the TLS, application name, schema and "
          + "character encoding parameters of docs/configuration.md. Drivers are bundled.")
  private String url;

  @Required
  @Size(min = 1, max = 65536)
  @JsonPropertyDescription(
      "One SELECT or WITH statement whose first column holds the keys "
          + "(text, or an integer column for keyType Long); run in a read-only transaction. No "
          + "comments, no ; except at the end, none of the words LOAD, INFILE, OUTFILE, DUMPFILE, "
          + "COPY, INTO. NULLs are counted and skipped.")
  private String query;

  @Size(min = 1, max = 253)
  @Pattern(KeyRef.NAME_PATTERN)
  @JsonPropertyDescription(
      "Optional Secret in the same namespace with keys username and password. The Secret must allow"
          + " this BloomFilter (annotation bloomoperator.io/allowed-filters) and the database host"
          + " (bloomoperator.io/allowed-hosts).")
  private String credentialsSecret;

  @Min(1)
  @Max(1_000_000)
  @JsonPropertyDescription(
      "Rows fetched per round trip (default 10000, at most the operator's "
          + "BLOOM_JDBC_MAX_FETCH_SIZE); rows are streamed, never held all at once.")
  private Integer fetchSize;

  @Pattern(BloomFilterSpec.DURATION_PATTERN)
  @JsonPropertyDescription(
      "Query timeout (default 30m), at most the operator's BLOOM_JDBC_MAX_QUERY_TIME "
          + "(default 10m): a larger value is lowered to it.")
  private String queryTimeout;

  @JsonPropertyDescription(
      "Optional: read the query as range partitions of an integer column, on several connections"
          + " (see docs/configuration.md, jdbc partitions).")
  private JdbcPartitionsSpec partitions;

  public String getUrl() {
    return url;
  }

  public void setUrl(String url) {
    this.url = url;
  }

  public String getQuery() {
    return query;
  }

  public void setQuery(String query) {
    this.query = query;
  }

  public String getCredentialsSecret() {
    return credentialsSecret;
  }

  public void setCredentialsSecret(String credentialsSecret) {
    this.credentialsSecret = credentialsSecret;
  }

  public Integer getFetchSize() {
    return fetchSize;
  }

  public void setFetchSize(Integer fetchSize) {
    this.fetchSize = fetchSize;
  }

  public String getQueryTimeout() {
    return queryTimeout;
  }

  public void setQueryTimeout(String queryTimeout) {
    this.queryTimeout = queryTimeout;
  }

  public JdbcPartitionsSpec getPartitions() {
    return partitions;
  }

  public void setPartitions(JdbcPartitionsSpec partitions) {
    this.partitions = partitions;
  }
}
