package io.bloomoperator.source;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ScheduledFuture;
import org.apache.hc.client5.http.classic.methods.HttpUriRequestBase;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.protocol.HttpClientContext;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.io.CloseMode;
import org.apache.hc.core5.io.ModalCloseable;
import org.apache.hc.core5.util.Timeout;

/**
 * One request of an http source and its response, with the source's timeouts: {@code
 * connectTimeout} for TCP and TLS set-up (and for the TLS handshake), {@code readTimeout} for every
 * wait for the response head and for body data, and a deadline for the whole exchange, body
 * included, after which {@link HttpClients}' scheduler thread aborts it as {@link #cancel} does.
 * Closing it before the body's end closes the connection: an abandoned body is never read to its
 * end.
 */
final class HttpCall implements AutoCloseable {

  private final CloseableHttpClient client;
  private final String namespace;
  private final HttpTarget target;
  private final HttpUriRequestBase request;
  private final HttpClientContext context = HttpClientContext.create();
  private ScheduledFuture<?> deadline;
  private ClassicHttpResponse response;
  private HostShares.Held share;

  /**
   * @param namespace whose share of the connections to the target's host ({@link HostShares}) the
   *     request holds
   */
  HttpCall(CloseableHttpClient client, String namespace, String method, HttpTarget target) {
    this.client = client;
    this.namespace = namespace;
    this.target = target;
    this.request = new HttpUriRequestBase(method, target.uri());
    request.setAuthority(target.authority());
  }

  /**
   * Sets header {@code name} to {@code value}, replacing any earlier value.
   *
   * @throws IllegalArgumentException when the name is not an HTTP token or the value holds a
   *     character other than visible ASCII, space and tab (the message quotes neither)
   */
  HttpCall header(String name, String value) {
    if (name.isEmpty() || !name.chars().allMatch(HttpCall::tokenChar)) {
      throw new IllegalArgumentException("header name is not a token");
    }
    if (!value.chars().allMatch(c -> c == '\t' || (c >= 0x20 && c < 0x7f))) {
      throw new IllegalArgumentException("header value holds a character HTTP does not allow");
    }
    request.setHeader(name, value);
    return this;
  }

  /**
   * Sends the request and reads the response head; the exchange is aborted once {@code
   * remainingNanos} have passed, the body included, and so is the wait for the namespace's share of
   * the host's connections.
   *
   * @throws HostShares.Exhausted when the namespace's requests to the host held all of its share
   *     until the deadline
   */
  @SuppressWarnings("deprecation") // see below
  void execute(Duration connectTimeout, Duration readTimeout, long remainingNanos)
      throws IOException {
    request.setConfig(
        RequestConfig.custom()
            // Per request, since sources of one pool have their own connectTimeout; the
            // replacement (ConnectionConfig) is per pool.
            .setConnectTimeout(Timeout.of(connectTimeout))
            .setResponseTimeout(Timeout.of(readTimeout))
            // Waiting for a pooled connection to the host (MAX_PER_ROUTE busy) is bounded by the
            // deadline only.
            .setConnectionRequestTimeout(Timeout.ofMilliseconds(remainingNanos / 1_000_000 + 1000))
            .setRedirectsEnabled(false)
            .setAuthenticationEnabled(false)
            .setProtocolUpgradeEnabled(false)
            .setExpectContinueEnabled(false)
            .setContentCompressionEnabled(false)
            .build());
    long start = System.nanoTime();
    share = HostShares.SHARED.take(namespace, target, remainingNanos);
    deadline = HttpClients.after(remainingNanos - (System.nanoTime() - start), request::cancel);
    try {
      response = client.executeOpen(target.httpHost(), request, context);
    } catch (CancellationException e) {
      // The deadline cancelled the wait for a pooled connection.
      close();
      InterruptedIOException cancelled = new InterruptedIOException("request cancelled");
      cancelled.initCause(e);
      throw cancelled;
    } catch (IOException | RuntimeException e) {
      close();
      throw e;
    }
  }

  /** Aborts the exchange: a read blocked on the connection ends now, with an IOException. */
  void cancel() {
    request.cancel();
  }

  /** Whether {@link #cancel} or the deadline aborted the exchange. */
  boolean cancelled() {
    return request.isCancelled();
  }

  /** Whether the request got a connection: a timeout before that was the connect timeout. */
  boolean connected() {
    return ConnectedAddressCheck.connected(context);
  }

  int status() {
    return response.getCode();
  }

  /** The response header's first value, or null. */
  String header(String name) {
    Header header = response.getFirstHeader(name);
    return header == null ? null : header.getValue();
  }

  /** The response body, empty when there is none (HEAD, 204). */
  InputStream body() throws IOException {
    HttpEntity entity = response.getEntity();
    return entity == null ? InputStream.nullInputStream() : entity.getContent();
  }

  /** Ends the exchange; a body not read to its end is not drained, its connection is closed. */
  @Override
  public void close() {
    if (deadline != null) {
      deadline.cancel(false);
    }
    if (response instanceof ModalCloseable closeable) {
      closeable.close(CloseMode.IMMEDIATE);
    }
    if (share != null) {
      share.close();
    }
  }

  /** RFC 9110 tchar. */
  private static boolean tokenChar(int c) {
    return (c >= '0' && c <= '9')
        || (c >= 'a' && c <= 'z')
        || (c >= 'A' && c <= 'Z')
        || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
  }
}
