package io.bloomoperator.source;

import io.bloomoperator.api.HttpSourceSpec;
import io.bloomoperator.reconcile.Durations;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.ConnectException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;

/**
 * Newline-delimited keys served over HTTP(S), plain or gzip, e.g. a nightly export of a
 * warehouse table. The body is streamed line by line into the sink and never held whole, so
 * exports of 100M keys (1-2 GB) work with a small heap.
 *
 * <p><b>Compression.</b> Requests send {@code Accept-Encoding: gzip}. The body is gunzipped when
 * the response says {@code Content-Encoding: gzip}, and also when the (decoded) body starts with
 * the gzip magic bytes {@code 1f 8b}, so a {@code ids.txt.gz} file served as
 * {@code application/octet-stream} works. Text that starts with those bytes is not valid UTF-8,
 * so the sniffing cannot misread a plain export.
 *
 * <p><b>Headers.</b> With {@code headersSecret}, every data key of that Secret (same namespace) is
 * sent as a request header of that name, e.g. {@code Authorization: Bearer ...}; surrounding
 * whitespace (a trailing newline from {@code echo}) is stripped. Header values never appear in
 * messages or logs.
 *
 * <p><b>Change token.</b> {@link #changeToken()} asks for the headers only ({@code HEAD}) and
 * returns {@code "etag:<ETag>"}, else {@code "last-modified:<Last-Modified>"}, else {@code null}.
 * An unchanged export therefore costs one HEAD per refresh and is not downloaded again. When
 * HEAD fails with any non-2xx status (405/501 from servers without HEAD, but also 403 from
 * pre-signed object-store URLs that are signed for GET only), the token comes from a GET whose
 * body is abandoned after the headers; that GET's status is authoritative, so a real 404 or 500
 * is reported from it. A server that sends neither validator gets {@code null}: the reconciler
 * then rebuilds every {@code refreshInterval} (an identical result is still not republished,
 * since the payload digest is compared). The token is taken before the download; if the export
 * changes in between, the next refresh sees a new token and rebuilds again, so a change is never
 * missed, at worst built twice.
 *
 * <p><b>Timeouts.</b> {@code connectTimeout} (default 10s) bounds TCP/TLS connection setup.
 * {@code readTimeout} (default 60s) bounds the wait for the response headers (the request
 * timeout) and, separately, every wait for further body data: {@link HttpBodyStream} polls for
 * the next buffer with that timeout and cancels the exchange when nothing arrived. A slow but
 * steady download of any length is fine; a stalled one fails. Either timeout fails the read with
 * reason {@value #TIMEOUT}.
 *
 * <p><b>Errors.</b> 404 is {@link SourceException#NOT_FOUND}; 401/403 and other non-2xx
 * statuses are {@link SourceException#UNREADABLE} with the status code and, for text bodies, the
 * first 200 characters of the body; connection failures are {@code UNREADABLE} with the cause.
 * Redirects are followed (except HTTPS to HTTP); the Secret's headers are
 * sent to the URL's own origin only. Messages name the URL without user info and
 * query string, which often carry credentials (pre-signed URLs).
 */
public final class HttpSource implements KeySource {

  /** Condition reason when the server does not connect, answer or send data in time. */
  public static final String TIMEOUT = "SourceTimeout";

  static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);
  static final Duration DEFAULT_READ_TIMEOUT = Duration.ofSeconds(60);
  private static final int SNIPPET_CHARS = 200;
  private static final int BUFFER = 256 * 1024;
  private static final int MAX_REDIRECTS = 5;
  private static final java.util.Set<Integer> REDIRECTS = java.util.Set.of(301, 302, 303, 307,
      308);

  /** One client per connect timeout, so connections are reused across reconciles. */
  private static final Map<Duration, HttpClient> CLIENTS = new ConcurrentHashMap<>();

  private final KubernetesClient client;
  private final String namespace;
  private final URI uri;
  private final String shownUrl;
  private final String headersSecret;
  private final Duration connectTimeout;
  private final Duration readTimeout;
  /** The Secret's headers, read once per source instance (that is, once per reconcile). */
  private Map<String, String> headers;

  /**
   * @throws IllegalArgumentException when the URL or a timeout is invalid (an invalid spec)
   */
  public HttpSource(KubernetesClient client, String namespace, HttpSourceSpec spec) {
    if (spec == null || spec.getUrl() == null || spec.getUrl().isBlank()) {
      throw new IllegalArgumentException("spec.source.http.url is required");
    }
    this.client = client;
    this.namespace = namespace;
    this.uri = parseUrl(spec.getUrl().strip());
    this.shownUrl = shown(uri);
    this.headersSecret = spec.getHeadersSecret() == null || spec.getHeadersSecret().isBlank()
        ? null : spec.getHeadersSecret();
    this.connectTimeout = duration(spec.getConnectTimeout(), DEFAULT_CONNECT_TIMEOUT,
        "connectTimeout");
    this.readTimeout = duration(spec.getReadTimeout(), DEFAULT_READ_TIMEOUT, "readTimeout");
  }

  @Override
  public String description() {
    return "http " + shownUrl;
  }

  @Override
  public String changeToken() throws SourceException {
    HttpResponse<HttpBodyStream> head = send("HEAD");
    HttpResponse<HttpBodyStream> response = head;
    head.body().close();
    if (!successful(head.statusCode())) {
      response = send("GET");
      try (HttpBodyStream body = response.body()) {
        if (!successful(response.statusCode())) {
          throw statusError(response);
        }
      }
    }
    return tokenOf(response.headers());
  }

  @Override
  public void readKeys(KeySink sink) throws SourceException {
    HttpResponse<HttpBodyStream> response = send("GET");
    try (InputStream body = response.body()) {
      if (!successful(response.statusCode())) {
        throw statusError(response);
      }
      InputStream decoded = decode(response, body);
      BufferedReader lines = new BufferedReader(
          new InputStreamReader(decoded, StandardCharsets.UTF_8), BUFFER);
      String line = lines.readLine();
      if (line != null && !line.isEmpty() && line.charAt(0) == '\uFEFF') {
        line = line.substring(1); // a UTF-8 byte order mark is not part of the first key
      }
      while (line != null) {
        sink.line(line);
        line = lines.readLine();
      }
    } catch (HttpBodyStream.Stalled e) {
      throw new SourceException(TIMEOUT, "download from " + shownUrl + " stalled: "
          + e.getMessage() + " (readTimeout " + readTimeout.toMillis() + " ms)", e);
    } catch (ZipException e) {
      throw new SourceException(SourceException.UNREADABLE, "body of " + shownUrl
          + " is not valid gzip: " + e.getMessage(), e);
    } catch (IOException e) {
      throw new SourceException(SourceException.UNREADABLE, "download from " + shownUrl
          + " failed: " + causeOf(e), e);
    }
  }

  /** The body with every gzip layer removed (Content-Encoding, then a gzip file as such). */
  private InputStream decode(HttpResponse<?> response, InputStream body) throws IOException {
    InputStream in = body;
    String encoding = response.headers().firstValue("Content-Encoding").orElse("identity")
        .strip().toLowerCase(Locale.ROOT);
    switch (encoding) {
      case "gzip", "x-gzip" -> in = new GZIPInputStream(in, BUFFER);
      case "identity", "" -> {
      }
      default -> throw new IOException("unsupported Content-Encoding " + encoding
          + " (only gzip is accepted)");
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
   * Sends the request, following up to {@value #MAX_REDIRECTS} redirects itself: the JDK's
   * {@code Redirect.NORMAL} would forward every header, Authorization included, to whatever host
   * a redirect names (and object stores reject a pre-signed URL that also carries one). Here the
   * Secret's headers only go to the URL's own origin (scheme, host and port), like curl without
   * {@code --location-trusted}; as with {@code NORMAL}, HTTPS never redirects to HTTP.
   */
  private HttpResponse<HttpBodyStream> send(String method) throws SourceException {
    URI target = uri;
    for (int hops = 0; ; hops++) {
      HttpResponse<HttpBodyStream> response = sendOnce(method, target, sameOrigin(target, uri));
      String location = response.headers().firstValue("Location").orElse(null);
      if (!REDIRECTS.contains(response.statusCode()) || location == null) {
        return response;
      }
      response.body().close();
      if (hops == MAX_REDIRECTS) {
        throw new SourceException(SourceException.UNREADABLE, "more than " + MAX_REDIRECTS
            + " redirects from " + shownUrl);
      }
      URI next;
      try {
        next = target.resolve(location.strip());
      } catch (IllegalArgumentException e) {
        throw new SourceException(SourceException.UNREADABLE, "HTTP "
            + response.statusCode() + " from " + shown(target)
            + " redirects to an invalid Location", e);
      }
      String scheme = next.getScheme() == null ? "" : next.getScheme().toLowerCase(Locale.ROOT);
      boolean downgrade = scheme.equals("http") && "https".equalsIgnoreCase(target.getScheme());
      if ((!scheme.equals("http") && !scheme.equals("https")) || next.getHost() == null
          || downgrade) {
        throw new SourceException(SourceException.UNREADABLE, "HTTP " + response.statusCode()
            + " from " + shown(target) + " redirects to " + (next.getHost() == null
            ? "an invalid Location" : shown(next)) + ", which is not followed (only http(s), "
            + "never from HTTPS to HTTP)");
      }
      target = next;
    }
  }

  private HttpResponse<HttpBodyStream> sendOnce(String method, URI target, boolean withSecret)
      throws SourceException {
    HttpRequest.Builder request = HttpRequest.newBuilder(target)
        .timeout(readTimeout)
        .method(method, HttpRequest.BodyPublishers.noBody())
        .setHeader("Accept-Encoding", "gzip")
        .setHeader("User-Agent", "bloom-operator");
    for (Map.Entry<String, String> header : withSecret ? headers().entrySet()
        : Map.<String, String>of().entrySet()) {
      try {
        request.setHeader(header.getKey(), header.getValue());
      } catch (IllegalArgumentException e) {
        // The JDK's message may quote the value; only the name is shown.
        throw new SourceException(SourceException.UNREADABLE, "header \"" + header.getKey()
            + "\" from Secret " + headersSecret + " (headersSecret) cannot be sent: it is not a "
            + "valid or allowed HTTP header");
      }
    }
    try {
      return httpClient().send(request.build(), HttpBodyStream.handler(readTimeout));
    } catch (HttpConnectTimeoutException e) {
      throw new SourceException(TIMEOUT, "no connection to " + shown(target) + " within "
          + connectTimeout.toMillis() + " ms (connectTimeout)", e);
    } catch (HttpTimeoutException e) {
      throw new SourceException(TIMEOUT, "no response from " + shown(target) + " within "
          + readTimeout.toMillis() + " ms (readTimeout)", e);
    } catch (IOException e) {
      throw new SourceException(SourceException.UNREADABLE, "cannot " + method + " "
          + shown(target) + ": " + causeOf(e), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SourceException(SourceException.UNREADABLE, "interrupted while requesting "
          + shown(target), e);
    }
  }

  private static boolean sameOrigin(URI a, URI b) {
    return a.getScheme().equalsIgnoreCase(b.getScheme())
        && a.getHost().equalsIgnoreCase(b.getHost()) && port(a) == port(b);
  }

  private static int port(URI u) {
    return u.getPort() >= 0 ? u.getPort() : "https".equalsIgnoreCase(u.getScheme()) ? 443 : 80;
  }

  private HttpClient httpClient() {
    return CLIENTS.computeIfAbsent(connectTimeout, timeout -> HttpClient.newBuilder()
        .connectTimeout(timeout)
        .followRedirects(HttpClient.Redirect.NEVER) // see send()
        // HTTP/1.1: no h2c upgrade attempts on http://, and no HTTP/2 flow-control window
        // limiting a multi-gigabyte download.
        .version(HttpClient.Version.HTTP_1_1)
        .build());
  }

  private Map<String, String> headers() throws SourceException {
    if (headers != null) {
      return headers;
    }
    if (headersSecret == null) {
      return headers = Map.of();
    }
    Secret secret;
    try {
      secret = client.secrets().inNamespace(namespace).withName(headersSecret).get();
    } catch (KubernetesClientException e) {
      throw new SourceException(SourceException.UNREADABLE, "cannot read Secret " + headersSecret
          + " (headersSecret): " + e.getMessage(), e);
    }
    if (secret == null) {
      throw new SourceException(SourceException.NOT_FOUND, "Secret " + headersSecret
          + " (headersSecret) not found in namespace " + namespace);
    }
    Map<String, String> read = new LinkedHashMap<>();
    if (secret.getData() != null) {
      secret.getData().forEach((name, value) -> read.put(name,
          new String(Base64.getDecoder().decode(value), StandardCharsets.UTF_8).strip()));
    }
    if (secret.getStringData() != null) {
      secret.getStringData().forEach((name, value) -> read.put(name, value.strip()));
    }
    return headers = Map.copyOf(read);
  }

  /** The exception for a non-2xx response, with a bit of its body when that is text. */
  private SourceException statusError(HttpResponse<HttpBodyStream> response) {
    int status = response.statusCode();
    String from = "HTTP " + status + " from " + shown(response.uri());
    if (status == 404 || status == 410) {
      return new SourceException(SourceException.NOT_FOUND, from);
    }
    String snippet = snippet(response);
    String detail = snippet.isEmpty() ? "" : ": " + snippet;
    if (status == 401 || status == 403) {
      String hint = headersSecret == null
          ? "; the server wants credentials: set headersSecret (e.g. an Authorization header)"
          : "; check the headers in Secret " + headersSecret + " (headersSecret)";
      return new SourceException(SourceException.UNREADABLE, from + hint + detail);
    }
    return new SourceException(SourceException.UNREADABLE, from + detail);
  }

  /** Up to 200 characters of a text body on one line, or "" (binary, empty or unreadable). */
  private String snippet(HttpResponse<HttpBodyStream> response) {
    String type = response.headers().firstValue("Content-Type").orElse("text/plain")
        .toLowerCase(Locale.ROOT);
    if (!(type.startsWith("text/") || type.contains("json") || type.contains("xml"))) {
      return "";
    }
    try {
      InputStream in = decode(response, response.body());
      byte[] bytes = in.readNBytes(SNIPPET_CHARS * 4);
      String text = new String(bytes, StandardCharsets.UTF_8).replaceAll("\\s+", " ").strip();
      return text.length() > SNIPPET_CHARS ? text.substring(0, SNIPPET_CHARS) + "…" : text;
    } catch (IOException | RuntimeException e) {
      return "";
    }
  }

  private static String tokenOf(HttpHeaders headers) {
    String etag = headers.firstValue("ETag").map(String::strip).orElse("");
    if (!etag.isEmpty()) {
      return "etag:" + etag;
    }
    String lastModified = headers.firstValue("Last-Modified").map(String::strip).orElse("");
    if (!lastModified.isEmpty()) {
      return "last-modified:" + lastModified;
    }
    return null;
  }

  private static boolean successful(int status) {
    return status >= 200 && status < 300;
  }

  /** The most useful description of a failure, e.g. "connection refused". */
  static String causeOf(Throwable e) {
    String message = null;
    boolean connect = false;
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof UnresolvedAddressException || t instanceof UnknownHostException) {
        return "unknown host" + (t.getMessage() == null ? "" : " " + t.getMessage());
      }
      connect |= t instanceof ConnectException;
      if (message == null && t.getMessage() != null && !t.getMessage().isBlank()) {
        message = t.getMessage();
      }
    }
    if (message == null && connect) {
      // The JDK client reports a refused connection as a ConnectException without a message.
      return "connection refused (nothing listening, or a firewall rejects it)";
    }
    return message != null ? message : e.getClass().getSimpleName();
  }

  private static URI parseUrl(String url) {
    URI parsed;
    try {
      parsed = new URI(url);
    } catch (URISyntaxException e) {
      // The exception text repeats the whole input, which may hold userinfo or a signed query
      // string: name only the reason and the position.
      throw new IllegalArgumentException("spec.source.http.url is not a URL: " + e.getReason()
          + " at index " + e.getIndex());
    }
    String scheme = parsed.getScheme() == null ? "" : parsed.getScheme().toLowerCase(Locale.ROOT);
    if ((!scheme.equals("http") && !scheme.equals("https")) || parsed.getHost() == null) {
      throw new IllegalArgumentException("spec.source.http.url must be an http:// or https:// "
          + "URL with a host");
    }
    return parsed;
  }

  /** The URL without user info and with the query string elided: both may hold credentials. */
  static String shown(URI uri) {
    StringBuilder text = new StringBuilder();
    text.append(uri.getScheme()).append("://").append(uri.getHost());
    if (uri.getPort() >= 0) {
      text.append(':').append(uri.getPort());
    }
    text.append(uri.getRawPath() == null ? "" : uri.getRawPath());
    if (uri.getRawQuery() != null) {
      text.append("?…");
    }
    return text.toString();
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
