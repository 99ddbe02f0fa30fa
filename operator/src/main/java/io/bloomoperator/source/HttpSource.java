package io.bloomoperator.source;

import io.bloomoperator.api.Durations;
import io.bloomoperator.api.HttpSourceSpec;
import io.bloomoperator.api.Reasons;
import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Newline-delimited keys served over HTTP(S), plain or gzip, e.g. a nightly export of a warehouse
 * table. The body is streamed line by line into the sink and never held whole, so exports of 100M
 * keys (1-2 GB) work with a small heap. A source with {@code urls} instead ({@link HttpUrlsSource})
 * reads each of its URLs through an instance of this class, with every rule below.
 *
 * <p><b>Compression.</b> Requests send {@code Accept-Encoding: gzip}. The body is gunzipped when
 * the response says {@code Content-Encoding: gzip}, and also when the (decoded) body starts with
 * the gzip magic bytes {@code 1f 8b}, so a {@code ids.txt.gz} file served as {@code
 * application/octet-stream} works. Text that starts with those bytes is not valid UTF-8, so the
 * sniffing cannot misread a plain export.
 *
 * <p><b>Headers.</b> With {@code headersSecret}, every data key of that Secret (same namespace) is
 * sent as a request header of that name, e.g. {@code Authorization: Bearer ...}; surrounding
 * whitespace (a trailing newline from {@code echo}) is stripped. Header values never appear in
 * messages or logs. Headers that describe the connection or the message framing ({@code Host},
 * {@code Connection}, {@code Content-Length}, {@code Transfer-Encoding}, ...) are refused.
 *
 * <p><b>Change token.</b> {@link #changeToken()} asks for the headers only ({@code HEAD}) and
 * returns {@code "etag:<digest>"}, else {@code "last-modified:<digest>"}, else {@code null}, where
 * the digest is a SHA-256 prefix of the header's value: the server's text never reaches the status
 * or the manifest. An unchanged export therefore costs one HEAD per refresh and is not downloaded
 * again. When HEAD fails with any non-2xx status (405/501 from servers without HEAD, but also 403
 * from pre-signed object-store URLs that are signed for GET only), the token comes from a GET whose
 * body is abandoned after the headers; that GET's status is authoritative, so a real 404 or 500 is
 * reported from it. A server that sends neither validator gets {@code null}: the reconciler then
 * rebuilds every {@code refreshInterval} (an identical result is still not republished, since the
 * payload digest is compared). The token is taken before the download; if the export changes in
 * between, the next refresh sees a new token and rebuilds again, so a change is never missed, at
 * worst built twice.
 *
 * <p><b>Where it connects.</b> Only to addresses the operator's {@link EgressPolicy} allows: by
 * default not to loopback, link-local (cloud metadata), unspecified, multicast or the operator's
 * own addresses, checked on the resolved and on the connected address, for the URL and for every
 * redirect ({@value Reasons#SOURCE_ADDRESS_NOT_ALLOWED}); see {@link HttpClients}. No proxy is
 * used.
 *
 * <p><b>Limits.</b> {@code connectTimeout} (default 10s) bounds TCP/TLS connection setup. {@code
 * readTimeout} (default 60s) bounds the wait for the response headers and every wait for further
 * body data: a slow but steady download is fine, a stalled one fails. The operator's {@link
 * HttpSourceSettings} bound what no BloomFilter can raise: the whole request, redirects and body
 * included ({@code BLOOM_HTTP_MAX_READ_TIME}, default 10m, so a server trickling a byte just before
 * each readTimeout cannot hold a reconcile thread forever), the length of a line ({@code
 * BLOOM_HTTP_MAX_LINE_BYTES}, 64 KiB, checked before the line is held) and the body's size after
 * decompression ({@code BLOOM_HTTP_MAX_BODY_BYTES}, 8 GiB, against gzip bombs). Timeouts fail the
 * read with {@value Reasons#SOURCE_TIMEOUT}, the other limits with {@value
 * Reasons#SOURCE_LIMIT_EXCEEDED}.
 *
 * <p><b>Errors.</b> 404 and 410 are {@link SourceException#NOT_FOUND}; 401/403 and other non-2xx
 * statuses are {@link SourceException#UNREADABLE} with the status code; connection failures are
 * {@code UNREADABLE} with a fixed description (unknown host, connection refused, TLS handshake
 * failed, ...). Nothing the server controls is quoted: no body, no header value, no redirect
 * target; the full exception is logged at DEBUG only. Redirects are followed (at most {@value
 * #MAX_REDIRECTS}, never from HTTPS to HTTP); the Secret's headers are sent to the URL's own origin
 * only. Messages name the URL without user info and query string, which often carry credentials
 * (pre-signed URLs).
 */
public final class HttpSource implements KeySource {

  static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);
  static final Duration DEFAULT_READ_TIMEOUT = Duration.ofSeconds(60);
  private static final int BUFFER = 256 * 1024;
  private static final int MAX_REDIRECTS = 5;
  private static final Set<Integer> REDIRECTS = Set.of(301, 302, 303, 307, 308);

  private static final Logger LOG = LoggerFactory.getLogger(HttpSource.class);

  private final Shared shared;
  private final String namespace;
  private final HttpTarget url;
  private final String shownUrl;
  private final Duration connectTimeout;
  private final Duration readTimeout;
  private final HttpSourceSettings settings;
  private final CloseableHttpClient http;

  /** The call whose body is being read, for {@link #cancel} from another thread. */
  private volatile HttpCall reading;

  /** The Secret's headers, read once per source instance (that is, once per reconcile). */
  private final SecretHeaders headers;

  /**
   * @param settings the operator's egress policy and limits
   * @throws IllegalArgumentException when the URL or a timeout is invalid (an invalid spec)
   */
  public HttpSource(SecretAccess secrets, HttpSourceSpec spec, HttpSourceSettings settings) {
    this(secrets, spec, settings, EgressCheckedDns.Lookup.SYSTEM);
  }

  /** With another resolver, for tests of what happens after resolution. */
  HttpSource(
      SecretAccess secrets,
      HttpSourceSpec spec,
      HttpSourceSettings settings,
      EgressCheckedDns.Lookup resolver) {
    this(secrets, spec, settings, resolver, secrets == null ? "" : secrets.namespace());
  }

  /**
   * @param namespace the filter's, whose share of a host's connections ({@link HostShares}) its
   *     requests take
   */
  HttpSource(
      SecretAccess secrets,
      HttpSourceSpec spec,
      HttpSourceSettings settings,
      EgressCheckedDns.Lookup resolver,
      String namespace) {
    this(secrets, spec, settings, resolver, namespace, HttpSourceUrl.parse(onlyUrl(spec)));
  }

  private HttpSource(
      SecretAccess secrets,
      HttpSourceSpec spec,
      HttpSourceSettings settings,
      EgressCheckedDns.Lookup resolver,
      String namespace,
      URI uri) {
    this(
        Shared.of(secrets, spec, settings, resolver, namespace, List.of(HttpSourceUrl.target(uri))),
        uri,
        HttpSourceUrl.target(uri));
  }

  /** One URL of a source that reads several ({@link HttpUrlsSource}). */
  HttpSource(Shared shared, URI uri, HttpTarget target) {
    this.shared = shared;
    this.namespace = shared.namespace();
    this.url = target;
    this.shownUrl = HttpSourceUrl.shown(uri);
    this.headers = shared.headers();
    this.connectTimeout = shared.connectTimeout();
    this.readTimeout = shared.readTimeout();
    this.settings = shared.settings();
    this.http = HttpClients.client(settings.egress(), shared.resolver());
  }

  /**
   * What every URL of one source shares: the Secret's headers (read once, for every URL's host),
   * the timeouts, the operator's limits and the client.
   *
   * @param urls how many URLs the source reads, for messages about limits they share
   */
  record Shared(
      String namespace,
      SecretHeaders headers,
      Duration connectTimeout,
      Duration readTimeout,
      HttpSourceSettings settings,
      EgressCheckedDns.Lookup resolver,
      int urls) {

    /**
     * @throws IllegalArgumentException when a timeout is invalid (an invalid spec)
     */
    static Shared of(
        SecretAccess secrets,
        HttpSourceSpec spec,
        HttpSourceSettings settings,
        EgressCheckedDns.Lookup resolver,
        String namespace,
        List<HttpTarget> targets) {
      return new Shared(
          namespace,
          new SecretHeaders(
              secrets,
              spec.getHeadersSecret() == null || spec.getHeadersSecret().isBlank()
                  ? null
                  : spec.getHeadersSecret(),
              targets),
          duration(spec.getConnectTimeout(), DEFAULT_CONNECT_TIMEOUT, "connectTimeout"),
          duration(spec.getReadTimeout(), DEFAULT_READ_TIMEOUT, "readTimeout"),
          settings,
          resolver,
          targets.size());
    }
  }

  /** The spec's one URL. */
  private static String onlyUrl(HttpSourceSpec spec) {
    if (spec != null && spec.getUrls() != null) {
      throw new IllegalArgumentException("spec.source.http: set only one of url and urls");
    }
    if (spec == null || spec.getUrl() == null || spec.getUrl().isBlank()) {
      throw new IllegalArgumentException("spec.source.http.url is required");
    }
    return spec.getUrl().strip();
  }

  @Override
  public String description() {
    return "http " + shownUrl;
  }

  @Override
  public String changeToken() throws SourceException {
    return changeToken(deadline());
  }

  /** The change token, asked for within the deadline of a read ({@link System#nanoTime()}). */
  String changeToken(long deadline) throws SourceException {
    try (Fetched head = send("HEAD", deadline)) {
      if (successful(head.call().status())) {
        return ChangeTokens.of(head.call());
      }
    }
    try (Fetched get = send("GET", deadline)) {
      if (!successful(get.call().status())) {
        throw statusError(get);
      }
      return ChangeTokens.of(get.call());
    }
  }

  @Override
  public void readKeys(KeySink sink) throws SourceException {
    read(sink, deadline(), new BodyBudget(settings.maxBodyBytes(), "BLOOM_HTTP_MAX_BODY_BYTES", 1));
  }

  /**
   * Streams the body's keys to {@code sink}, taking its bytes from {@code budget} and ending by
   * {@code deadline} ({@link System#nanoTime()}): a URL list's read shares both across its URLs.
   */
  void read(KeySink sink, long deadline, BodyBudget budget) throws SourceException {
    Fetched fetched = send("GET", deadline);
    reading = fetched.call();
    try {
      if (!successful(fetched.call().status())) {
        throw statusError(fetched);
      }
      // Closing ends the gzip layers' inflaters (native memory, else freed only by a GC); the
      // exchange itself is ended by fetched.close(), which does not drain the body.
      try (InputStream body = new BoundedInputStream(decode(fetched), budget)) {
        BoundedLines.stream(body, settings.maxLineBytes(), "BLOOM_HTTP_MAX_LINE_BYTES", sink);
      }
    } catch (BodyLimitExceeded e) {
      throw new SourceException(
          Reasons.SOURCE_LIMIT_EXCEEDED,
          "download from "
              + shownUrl
              + " stopped: "
              + e.getMessage()
              + " (the operator's "
              + e.setting()
              + ")");
    } catch (IOException e) {
      LOG.debug("{}: download failed", shownUrl, e);
      if (fetched.call().cancelled()) {
        throw tookTooLong();
      }
      if (e instanceof SocketTimeoutException) {
        throw new SourceException(
            Reasons.SOURCE_TIMEOUT,
            "download from "
                + shownUrl
                + " stalled: no data "
                + "received for "
                + readTimeout.toMillis()
                + " ms (readTimeout)");
      }
      if (e instanceof ZipException || e instanceof EOFException) {
        // Only GZIPInputStream throws EOFException here: a body cut short is a
        // ConnectionClosedException or a MalformedChunkCodingException.
        throw new SourceException(
            Reasons.SOURCE_UNREADABLE, "body of " + shownUrl + " is not valid gzip");
      }
      throw new SourceException(
          Reasons.SOURCE_UNREADABLE,
          "download from " + shownUrl + " failed: " + HttpFailureText.of(e));
    } finally {
      reading = null;
      fetched.close();
    }
  }

  /**
   * Refuses the URL now when the egress policy refuses its host, by the resolver its requests use
   * (which judges them again on every connection): a URL list is refused before any of its URLs is
   * requested. A host that does not resolve is left to the request, which reports it.
   */
  void checkAddress() throws SourceException {
    try {
      EgressCheckedDns.forSources(settings.egress(), shared.resolver()).resolve(url.host());
    } catch (EgressCheckedDns.Refused e) {
      throw refused(0, e.refusal());
    } catch (UnknownHostException e) {
      LOG.debug("{}: not resolved before the request", shownUrl, e);
    }
  }

  /** The URL's host as the client and the egress policy see it. */
  String host() {
    return url.host();
  }

  /** The URL as messages show it: without user info and query string. */
  String shownUrl() {
    return shownUrl;
  }

  /** Cancels the download under way: a body read blocked on a stalled server ends now. */
  @Override
  public void cancel() {
    HttpCall call = reading;
    if (call != null) {
      call.cancel();
    }
  }

  /** A response and how many redirects led to it; closing it ends the exchange. */
  private record Fetched(HttpCall call, int hops) implements AutoCloseable {
    @Override
    public void close() {
      call.close();
    }
  }

  /** The body with every gzip layer removed (Content-Encoding, then a gzip file as such). */
  private InputStream decode(Fetched fetched) throws IOException, SourceException {
    // Closing what decode returns must not close the response's stream: that would read the rest
    // of the body to reuse the connection (up to the body bound, after a failure).
    InputStream in =
        new FilterInputStream(fetched.call().body()) {
          @Override
          public void close() {}
        };
    String encoding =
        Optional.ofNullable(fetched.call().header("Content-Encoding"))
            .orElse("identity")
            .strip()
            .toLowerCase(Locale.ROOT);
    switch (encoding) {
      case "gzip", "x-gzip" -> in = new GZIPInputStream(in, BUFFER);
      case "identity", "" -> {}
      default -> {
        LOG.debug("{}: unsupported Content-Encoding {}", shownUrl, encoding);
        throw new SourceException(
            Reasons.SOURCE_UNREADABLE,
            "body of " + shownUrl + " has an unsupported Content-Encoding (only gzip is accepted)");
      }
    }
    BufferedInputStream peek = new BufferedInputStream(in, BUFFER);
    peek.mark(2);
    int b1 = peek.read();
    int b2 = peek.read();
    peek.reset();
    if (b1 == 0x1f && b2 == 0x8b) {
      return new GZIPInputStream(peek, BUFFER);
    }
    return peek;
  }

  /**
   * Sends the request, following up to {@value #MAX_REDIRECTS} redirects itself: the client's own
   * redirect handling would forward the Secret's headers to whatever host a redirect names (object
   * stores also reject a pre-signed URL that carries an Authorization header), and would hide from
   * the messages which hop was refused. Here the Secret's headers only go to the URL's own origin
   * (scheme, host and port), like curl without {@code --location-trusted}; HTTPS never redirects to
   * HTTP.
   */
  private Fetched send(String method, long deadline) throws SourceException {
    HttpTarget target = url;
    for (int hops = 0; ; hops++) {
      Fetched fetched = sendOnce(method, target, hops, target.sameOrigin(url), deadline);
      int status = fetched.call().status();
      String location = fetched.call().header("Location");
      if (!REDIRECTS.contains(status) || location == null) {
        return fetched;
      }
      fetched.close();
      if (hops == MAX_REDIRECTS) {
        throw new SourceException(
            Reasons.SOURCE_UNREADABLE,
            "more than " + MAX_REDIRECTS + " redirects from " + shownUrl);
      }
      HttpTarget next = target.resolve(location.strip()).orElse(null);
      if (next == null) {
        LOG.debug("{}: HTTP {} redirects to an invalid Location {}", shownUrl, status, location);
        throw new SourceException(
            Reasons.SOURCE_UNREADABLE,
            "HTTP "
                + status
                + " from "
                + where(hops)
                + " redirects to a Location that is not an http(s) URL");
      }
      LOG.debug("{}: HTTP {} redirects to {}", shownUrl, status, next.shown());
      if (target.https() && !next.https()) {
        throw new SourceException(
            Reasons.SOURCE_UNREADABLE,
            "HTTP "
                + status
                + " from "
                + where(hops)
                + " redirects from HTTPS to HTTP, which is not followed");
      }
      target = next;
    }
  }

  /**
   * One request. IP literals and names alike are judged by the client's resolver ({@link
   * EgressCheckedDns}), and the connection's address again before anything is sent ({@link
   * ConnectedAddressCheck}).
   */
  private Fetched sendOnce(
      String method, HttpTarget target, int hops, boolean withSecret, long deadline)
      throws SourceException {
    HttpCall call =
        new HttpCall(http, namespace, method, target)
            .header("Accept-Encoding", "gzip")
            .header("User-Agent", "bloom-operator");
    if (withSecret) {
      headers.applyTo(call);
    }
    // Visible to cancel() from here: a stop also ends the wait for a connection or a response head.
    reading = call;
    long remaining = deadline - System.nanoTime();
    if (remaining <= 0) {
      throw tookTooLong();
    }
    try {
      // The shared client costs no thread; the deadline is what is left of the total read time.
      call.execute(connectTimeout, readTimeout, remaining);
      return new Fetched(call, hops);
    } catch (IOException e) {
      LOG.debug("{}: {} {} failed", shownUrl, method, target.shown(), e);
      Optional<EgressPolicy.Refusal> refusal = HttpFailureText.refusalOf(e);
      if (refusal.isPresent()) {
        throw refused(hops, refusal.get());
      }
      if (e instanceof HostShares.Exhausted) {
        throw new SourceException(
            Reasons.SOURCE_TIMEOUT,
            "no connection to "
                + where(hops)
                + " within "
                + settings.maxReadTime().toMillis()
                + " ms (the operator's BLOOM_HTTP_MAX_READ_TIME): this namespace's sources already"
                + " hold "
                + HostShares.PER_NAMESPACE
                + " connections to that host, its share of "
                + HttpClients.MAX_PER_ROUTE);
      }
      if (call.cancelled()) {
        throw tookTooLong();
      }
      if (e instanceof InterruptedIOException && !Thread.currentThread().isInterrupted()) {
        throw call.connected()
            ? new SourceException(
                Reasons.SOURCE_TIMEOUT,
                "no response from "
                    + where(hops)
                    + " within "
                    + readTimeout.toMillis()
                    + " ms (readTimeout)")
            : new SourceException(
                Reasons.SOURCE_TIMEOUT,
                "no connection to "
                    + where(hops)
                    + " within "
                    + connectTimeout.toMillis()
                    + " ms (connectTimeout)");
      }
      throw new SourceException(
          Reasons.SOURCE_UNREADABLE,
          "cannot " + method + " " + where(hops) + ": " + HttpFailureText.of(e));
    }
  }

  /** The same text whether or not anything listens there: no port scan through messages. */
  private SourceException refused(int hops, EgressPolicy.Refusal refusal) {
    String whose =
        hops == 0
            ? "not connecting to " + shownUrl + ": the host's address "
            : "not following the redirect from " + where(hops - 1) + ": the target's address ";
    String hint =
        refusal == EgressPolicy.Refusal.DENIED
            ? ""
            : " (only the operator's BLOOM_HTTP_ALLOW can admit it)";
    return new SourceException(Reasons.SOURCE_ADDRESS_NOT_ALLOWED, whose + refusal.text() + hint);
  }

  private SourceException tookTooLong() {
    return new SourceException(
        Reasons.SOURCE_TIMEOUT,
        "reading "
            + (shared.urls() == 1
                ? shownUrl
                : "the " + shared.urls() + " URLs (at " + shownUrl + ")")
            + " took longer than "
            + settings.maxReadTime().toMillis()
            + " ms (the operator's BLOOM_HTTP_MAX_READ_TIME)");
  }

  private long deadline() {
    return System.nanoTime() + settings.maxReadTime().toNanos();
  }

  /** The URL as the user wrote it (redacted), and how many redirects led to the response. */
  private String where(int hops) {
    return hops == 0
        ? shownUrl
        : shownUrl + " (after " + hops + " redirect" + (hops == 1 ? "" : "s") + ")";
  }

  /** The exception for a non-2xx response: the status code only, never the body. */
  private SourceException statusError(Fetched fetched) {
    int status = fetched.call().status();
    String from = "HTTP " + status + " from " + where(fetched.hops());
    if (status == 404 || status == 410) {
      return new SourceException(Reasons.SOURCE_NOT_FOUND, from);
    }
    if (status == 401 || status == 403) {
      String hint =
          headers.secretName() == null
              ? "; the server wants credentials: set headersSecret (e.g. an Authorization header)"
              : "; check the headers in Secret " + headers.secretName() + " (headersSecret)";
      return new SourceException(Reasons.SOURCE_UNREADABLE, from + hint);
    }
    return new SourceException(Reasons.SOURCE_UNREADABLE, from);
  }

  private static boolean successful(int status) {
    return status >= 200 && status < 300;
  }

  private static Duration duration(String text, Duration fallback, String field) {
    if (text == null || text.isBlank()) {
      return fallback;
    }
    try {
      return Durations.parse(text.strip());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("spec.source.http." + field + ": " + e.getMessage(), e);
    }
  }
}
