package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.List;

/**
 * Newline-delimited keys served over HTTP(S), plain or gzip: one {@code url}, or {@code urls} read
 * in parallel as the partitions of one build.
 */
@ValidationRule(
    value = "has(self.url) != has(self.urls)",
    message = "exactly one of url and urls must be set")
public class HttpSourceSpec {

  /** What {@code url} and each of {@code urls} must look like. */
  public static final String URL_PATTERN = "^https?://.+";

  /** Most URLs {@code urls} may list: as many as {@code jdbc.partitions.count}. */
  public static final int MAX_URLS = 64;

  /**
   * Most distinct hosts {@code urls} may name: each is looked up before any request, and a look-up
   * cannot be interrupted, so the count bounds how long a list can hold its thread on slow DNS.
   */
  public static final int MAX_URL_HOSTS = 8;

  /** Longest {@code url} or item of {@code urls}, in characters (the usual limit of clients). */
  public static final int MAX_URL_LENGTH = 2048;

  @Pattern(URL_PATTERN)
  @Size(max = MAX_URL_LENGTH)
  @JsonPropertyDescription(
      "http:// or https:// URL of a newline-delimited key export; gzip is "
          + "detected from Content-Encoding or the body's magic bytes (e.g. ids.txt.gz). "
          + "Exactly one of url and urls.")
  private String url;

  @Size(min = 1, max = MAX_URLS)
  @JsonPropertyDescription(
      "Instead of url: 1 to 64 http(s) URLs on at most 8 distinct hosts, each a part of one "
          + "export (e.g. ids-0.txt.gz, ids-1.txt.gz), read in parallel as far as the namespace's share of partition "
          + "connections allows; the filter is the one url would give for the bodies "
          + "concatenated. The operator's limits on body bytes and read time apply to all of "
          + "them together.")
  private List<@Pattern(URL_PATTERN) @Size(max = MAX_URL_LENGTH) String> urls;

  @Size(min = 1, max = 253)
  @Pattern(KeyRef.NAME_PATTERN)
  @JsonPropertyDescription(
      "Optional Secret in the same namespace; each of its keys is sent as a "
          + "request header of that name (e.g. Authorization). The Secret must allow this "
          + "BloomFilter (annotation bloomoperator.io/allowed-filters) and the URL's host "
          + "(bloomoperator.io/allowed-hosts), for urls every URL's host.")
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

  public List<String> getUrls() {
    return urls;
  }

  public void setUrls(List<String> urls) {
    this.urls = urls;
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
