package io.bloomoperator.source;

import io.bloomoperator.api.HttpSourceSpec;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * An http source with {@code urls}: the parts of one export (e.g. {@code ids-0.txt.gz} …{@code
 * ids-7.txt.gz}) read in parallel as the partitions of one build ({@link HttpPartitionedRead}), so
 * downloading, decompressing and splitting lines uses several cores instead of one reading thread.
 * The filter is the one a single {@code url} serving the bodies concatenated gives.
 *
 * <p>Each URL is an {@link HttpSource} of its own as to where it connects and what it sends, with
 * every rule of a single URL; what they share is bounded as one: the Secret's headers are read once
 * and only if the Secret allows every URL's host (each URL's request gets them for its own origin
 * only), the body bytes and the read time are the operator's bounds for all URLs together, and the
 * threads and connections beyond the build's own are the namespace's share of {@code
 * BLOOM_HTTP_PARTITION_CONNECTIONS}. Before any URL is requested every URL's host is judged by the
 * egress policy and the Secret is checked, so a list with one refused URL requests none.
 *
 * <p>The change token is that of every URL (a {@code HEAD} each, one after the other, within one
 * {@code BLOOM_HTTP_MAX_READ_TIME}), digested together; when one URL has none, the list has none
 * and is rebuilt every refresh. Messages name the URL concerned, without user info and query
 * string.
 */
public final class HttpUrlsSource implements KeySource {

  private final List<HttpSource> parts;
  private final HttpSource.Shared shared;
  private volatile HttpPartitionedRead reading;

  /**
   * @param secrets the only way the source may read its {@code headersSecret}; its namespace is the
   *     filter's
   * @param settings the operator's egress policy, limits and partition connection shares
   * @throws IllegalArgumentException when the list, a URL or a timeout is invalid (an invalid spec)
   */
  public HttpUrlsSource(SecretAccess secrets, HttpSourceSpec spec, HttpSourceSettings settings) {
    this(
        secrets,
        spec,
        settings,
        EgressCheckedDns.Lookup.SYSTEM,
        secrets == null ? "" : secrets.namespace());
  }

  /**
   * @param namespace the filter's, whose shares of partition connections and of hosts' connections
   *     its reads take
   * @throws IllegalArgumentException when the list, a URL or a timeout is invalid (an invalid spec)
   */
  HttpUrlsSource(
      SecretAccess secrets,
      HttpSourceSpec spec,
      HttpSourceSettings settings,
      EgressCheckedDns.Lookup resolver,
      String namespace) {
    if (spec.getUrl() != null) {
      throw new IllegalArgumentException("spec.source.http: set only one of url and urls");
    }
    List<String> urls = spec.getUrls();
    if (urls == null || urls.isEmpty() || urls.size() > HttpSourceSpec.MAX_URLS) {
      throw new IllegalArgumentException(
          "spec.source.http.urls must list 1 to " + HttpSourceSpec.MAX_URLS + " URLs");
    }
    List<URI> uris = new ArrayList<>(urls.size());
    List<HttpTarget> targets = new ArrayList<>(urls.size());
    for (int i = 0; i < urls.size(); i++) {
      String field = "spec.source.http.urls[" + i + "]";
      if (urls.get(i) == null || urls.get(i).isBlank()) {
        throw new IllegalArgumentException(field + " is empty");
      }
      URI uri = HttpSourceUrl.parse(urls.get(i).strip(), field);
      uris.add(uri);
      targets.add(HttpSourceUrl.target(uri, field));
    }
    this.shared = HttpSource.Shared.of(secrets, spec, settings, resolver, namespace, targets);
    List<HttpSource> sources = new ArrayList<>(urls.size());
    for (int i = 0; i < uris.size(); i++) {
      sources.add(new HttpSource(shared, uris.get(i), targets.get(i)));
    }
    this.parts = List.copyOf(sources);
  }

  @Override
  public String description() {
    String first = "http " + parts.get(0).shownUrl();
    int more = parts.size() - 1;
    return more == 0 ? first : first + " and " + more + " more URL" + (more == 1 ? "" : "s");
  }

  @Override
  public String changeToken() throws SourceException {
    long deadline = deadline();
    check();
    List<String> tokens = new ArrayList<>(parts.size());
    for (HttpSource part : parts) {
      String token = part.changeToken(deadline);
      if (token == null) {
        return null;
      }
      tokens.add(token);
    }
    return "urls:" + ChangeTokens.digest(String.join("\n", tokens));
  }

  @Override
  public void readKeys(KeySink sink) throws SourceException {
    long deadline = deadline();
    check();
    HttpSourceSettings settings = shared.settings();
    HttpPartitionedRead read =
        new HttpPartitionedRead(parts, settings.partitionConnections(), shared.namespace());
    reading = read;
    try {
      read.read(
          sink,
          deadline,
          new BodyBudget(settings.maxBodyBytes(), "BLOOM_HTTP_MAX_BODY_BYTES", parts.size()));
    } finally {
      reading = null;
    }
  }

  /** Ends the read under way: every URL's download. */
  @Override
  public void cancel() {
    HttpPartitionedRead read = reading;
    if (read != null) {
      read.stop();
    }
  }

  /** Every URL's host by the egress policy, then the Secret for every host: before any request. */
  private void check() throws SourceException {
    Set<String> hosts = new HashSet<>();
    for (HttpSource part : parts) {
      // One look-up per host: 64 parts of one export usually share it.
      if (hosts.add(part.host())) {
        part.checkAddress();
      }
    }
    shared.headers().check();
  }

  private long deadline() {
    return System.nanoTime() + shared.settings().maxReadTime().toNanos();
  }
}
