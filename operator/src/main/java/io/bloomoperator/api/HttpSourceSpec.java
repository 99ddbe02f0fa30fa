package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/** Newline-delimited keys served over HTTP(S), plain or gzip. */
public class HttpSourceSpec {

  @Required
  @Pattern("^https?://.+")
  @JsonPropertyDescription(
      "http:// or https:// URL of a newline-delimited key export; gzip is "
          + "detected from Content-Encoding or the body's magic bytes (e.g. ids.txt.gz).")
  private String url;

  @Size(min = 1, max = 253)
  @Pattern(KeyRef.NAME_PATTERN)
  @JsonPropertyDescription(
      "Optional Secret in the same namespace; each of its keys is sent as a "
          + "request header of that name (e.g. Authorization). The Secret must allow this "
          + "BloomFilter (annotation bloomoperator.io/allowed-filters) and the URL's host "
          + "(bloomoperator.io/allowed-hosts).")
  private String headersSecret;

  @Pattern(BloomFilterSpec.DURATION_PATTERN)
  @JsonPropertyDescription("Connect timeout (default 10s).")
  private String connectTimeout;

  @Pattern(BloomFilterSpec.DURATION_PATTERN)
  @JsonPropertyDescription(
      "Longest wait for response data before the download fails " + "(default 60s).")
  private String readTimeout;

  public String getUrl() {
    return url;
  }

  public void setUrl(String url) {
    this.url = url;
  }

  public String getHeadersSecret() {
    return headersSecret;
  }

  public void setHeadersSecret(String headersSecret) {
    this.headersSecret = headersSecret;
  }

  public String getConnectTimeout() {
    return connectTimeout;
  }

  public void setConnectTimeout(String connectTimeout) {
    this.connectTimeout = connectTimeout;
  }

  public String getReadTimeout() {
    return readTimeout;
  }

  public void setReadTimeout(String readTimeout) {
    this.readTimeout = readTimeout;
  }
}
