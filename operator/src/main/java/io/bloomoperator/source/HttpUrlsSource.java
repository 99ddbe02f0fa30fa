package io.bloomoperator.source;

import io.bloomoperator.api.HttpSourceSpec;
import io.bloomoperator.api.Reasons;
import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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
 * egress policy and the Secret is checked, so a list with one refused URL requests none; a list
 * names at most {@value HttpSourceSpec#MAX_URL_HOSTS} distinct hosts, and that check ends at the
 * read's deadline or a cancel, at most one DNS look-up later.
 *
 * <p>The change token is that of every URL (a {@code HEAD} each, one after the other, within one
 * {@code BLOOM_HTTP_MAX_READ_TIME}), digested together; when one URL has none, the list has none
 * and is rebuilt every refresh. Messages name the URL concerned, without user info and query
 * string.
 */
public final class HttpUrlsSource implements KeySource {

  private final List<HttpSource> parts;

  /** The first part on each distinct host: the host check looks each host up once. */
  private final List<HttpSource> onePerHost;

  private final HttpSource.Shared shared;
  private volatile HttpPartitionedRead reading;
  private volatile HostCheck checking;

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
    long hosts = targets.stream().map(HttpTarget::host).distinct().count();
    if (hosts > HttpSourceSpec.MAX_URL_HOSTS) {
      throw new IllegalArgumentException(
          "spec.source.http.urls name "
              + hosts
              + " distinct hosts; at most "
              + HttpSourceSpec.MAX_URL_HOSTS
              + " are allowed");
    }
    this.shared = HttpSource.Shared.of(secrets, spec, settings, resolver, namespace, targets);
    List<HttpSource> sources = new ArrayList<>(urls.size());
    for (int i = 0; i < uris.size(); i++) {
      sources.add(new HttpSource(shared, uris.get(i), targets.get(i)));
    }
    this.parts = List.copyOf(sources);
    Map<String, HttpSource> byHost = new LinkedHashMap<>();
    for (HttpSource part : parts) {
      byHost.putIfAbsent(part.host(), part);
    }
    this.onePerHost = List.copyOf(byHost.values());
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
    check(deadline);
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
    check(deadline);
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

  /** Ends the read under way: the host checks before it, or every URL's download. */
  @Override
  public void cancel() {
    HostCheck hostCheck = checking;
    if (hostCheck != null) {
      hostCheck.cancelled = true;
    }
    HttpPartitionedRead read = reading;
    if (read != null) {
      read.stop();
    }
  }

  /**
   * Every URL's host by the egress policy, then the Secret for every host: before any request. A
   * look-up cannot be interrupted, so between two the deadline and a cancel are looked at, and the
   * hosts are few ({@link HttpSourceSpec#MAX_URL_HOSTS}): the check holds its thread at most that
   * many look-ups past either.
   */
  private void check(long deadline) throws SourceException {
    HostCheck hostCheck = new HostCheck();
    checking = hostCheck;
    try {
      // One look-up per host: 64 parts of one export usually share it.
      for (HttpSource part : onePerHost) {
        if (hostCheck.cancelled) {
          throw new SourceException(Reasons.SOURCE_UNREADABLE, "the read was stopped");
        }
        if (System.nanoTime() - deadline > 0) {
          throw new SourceException(
              Reasons.SOURCE_TIMEOUT,
              "looking up the hosts of the "
                  + parts.size()
                  + " URLs took longer than the operator's BLOOM_HTTP_MAX_READ_TIME");
        }
        part.checkAddress();
      }
    } finally {
      checking = null;
    }
    shared.headers().check();
  }

  /** One run of {@link #check}: whether it was cancelled. */
  private static final class HostCheck {
    volatile boolean cancelled;
  }

  private long deadline() {
    return System.nanoTime() + shared.settings().maxReadTime().toNanos();
  }
}
