package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;

/** Keys from the first column of a SQL query, streamed with a cursor. */
public class JdbcSourceSpec {

  @Required
  @Pattern("^jdbc:(postgresql|mysql|mariadb):.+")
  @JsonPropertyDescription("JDBC URL; PostgreSQL, MySQL and MariaDB drivers are bundled.")
  private String url;

  @Required
  @JsonPropertyDescription("Query whose first column holds the keys (text, or an integer "
      + "column for keyType Long). NULLs are counted and skipped.")
  private String query;

  @JsonPropertyDescription("Optional Secret in the same namespace with keys username and "
      + "password.")
  private String credentialsSecret;

  @Min(1)
  @Max(1_000_000)
  @JsonPropertyDescription("Rows fetched per round trip (default 10000); rows are streamed, "
      + "never held all at once.")
  private Integer fetchSize;

  @Pattern(BloomFilterSpec.DURATION_PATTERN)
  @JsonPropertyDescription("Query timeout (default 30m).")
  private String queryTimeout;

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
}
