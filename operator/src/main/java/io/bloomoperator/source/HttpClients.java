package io.bloomoperator.source;

import java.net.Proxy;
import java.net.Socket;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.hc.client5.http.DnsResolver;
import org.apache.hc.client5.http.SchemePortResolver;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.impl.DefaultSchemePortResolver;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClientBuilder;
import org.apache.hc.client5.http.impl.io.DefaultHttpClientConnectionOperator;
import org.apache.hc.client5.http.impl.io.ManagedHttpClientConnectionFactory;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.client5.http.impl.routing.DefaultRoutePlanner;
import org.apache.hc.client5.http.io.HttpClientConnectionOperator;
import org.apache.hc.client5.http.ssl.DefaultClientTlsStrategy;
import org.apache.hc.client5.http.ssl.TlsSocketStrategy;
import org.apache.hc.core5.http.URIScheme;
import org.apache.hc.core5.http.config.Http1Config;
import org.apache.hc.core5.http.config.RegistryBuilder;
import org.apache.hc.core5.util.TimeValue;
import org.apache.hc.core5.util.Timeout;

/**
 * The HTTP client of http sources (Apache HttpClient 5, the stack the object stores use too): one
 * client and one connection pool per egress policy, shared by every source, whatever their timeouts
 * (those are set per request, see {@link HttpCall}). A source costs no thread: one scheduler
 * thread, started with the first request, aborts requests that outlive their deadline and closes
 * idle and expired pooled connections for all of them.
 *
 * <p><b>Where it connects.</b> Host names and IP literals are resolved only by {@link
 * EgressCheckedDns}, which refuses a host when the policy refuses any of its addresses; sockets are
 * made with {@link Proxy#NO_PROXY} and every route is planned direct (no proxy, whatever the JVM's
 * or the environment's settings: a proxy would connect to addresses the policy never sees), so a
 * new connection goes only to an address the resolver returned, and a DNS answer that changes
 * between a check and the connection (DNS rebinding) cannot slip through. Finally {@link
 * ConnectedAddressCheck} judges the remote address of the socket each request is about to be sent
 * on, pooled or new, so nothing is sent to a refused address whatever path led there.
 *
 * <p><b>What it does not do.</b> Redirects are followed by {@link HttpSource} (each hop judged, the
 * Secret's headers kept to the URL's own origin); no automatic retries (a failed read is reported
 * and the reconcile retries it); no transparent decompression (the source decodes gzip itself,
 * under its body limit); no cookies, no authentication caching, no protocol upgrade. HTTP/1.1 only:
 * the classic client speaks nothing else, so there is no HTTP/2 flow-control window limiting a
 * multi-gigabyte download and no connection coalescing across host names.
 */
final class HttpClients {

  /**
   * Connections to one host and port: a tenant's export service cannot take the whole pool. More
   * requests to it wait for one of these (bounded by their deadline).
   */
  static final int MAX_PER_ROUTE = 8;

  /** Connections of one pool, in use or idle; idle ones of other hosts are closed to make room. */
  static final int MAX_TOTAL = 64;

  /** A pooled connection unused this long is closed. */
  private static final Timeout MAX_IDLE = Timeout.ofSeconds(60);

  /** No connection lives longer, however busy: a host's new address is used within this time. */
  private static final TimeValue TIME_TO_LIVE = TimeValue.ofMinutes(5);

  /** How often idle and expired connections are looked for. */
  private static final long EVICT_EVERY_SECONDS = 30;

  /**
   * A response's status line and each header line: OkHttp, the client before this one, bounded all
   * headers to 256 KiB; 16 KiB a line and at most 100 lines (HttpClient's default count) keep what
   * a server can make the operator hold per response under 2 MiB.
   */
  private static final int MAX_HEADER_LINE = 16 * 1024;

  private static final ScheduledThreadPoolExecutor TIMER = timer();

  /** Equal policies and the same resolver share a client and its pool. */
  private record Key(EgressPolicy policy, EgressCheckedDns.Lookup lookup) {}

  private static final Map<Key, CloseableHttpClient> CLIENTS = new ConcurrentHashMap<>();

  private HttpClients() {}

  /** The client that connects only where {@code policy} allows, resolving with {@code lookup}. */
  static CloseableHttpClient client(EgressPolicy policy, EgressCheckedDns.Lookup lookup) {
    return CLIENTS.computeIfAbsent(new Key(policy, lookup), HttpClients::build);
  }

  /** Runs {@code abort} once {@code nanos} have passed, on the one scheduler thread. */
  static ScheduledFuture<?> after(long nanos, Runnable abort) {
    return TIMER.schedule(abort, nanos, TimeUnit.NANOSECONDS);
  }

  private static CloseableHttpClient build(Key key) {
    PoolingHttpClientConnectionManager pool =
        new DirectSockets()
            .setDnsResolver(EgressCheckedDns.forSources(key.policy(), key.lookup()))
            // The JVM's default trust store and host name verification; the JVM's https.*
            // properties are not read.
            .setTlsSocketStrategy(DefaultClientTlsStrategy.createDefault())
            .setMaxConnTotal(MAX_TOTAL)
            .setMaxConnPerRoute(MAX_PER_ROUTE)
            .setDefaultConnectionConfig(
                ConnectionConfig.custom()
                    .setTimeToLive(TIME_TO_LIVE)
                    .setIdleTimeout(MAX_IDLE)
                    // Every pooled connection is checked before reuse: one the server closed fails
                    // the check, not the request (the client does not retry; OkHttp, before it,
                    // retried such a request on a new connection).
                    .setValidateAfterInactivity(TimeValue.ZERO_MILLISECONDS)
                    .build())
            .setConnectionFactory(
                ManagedHttpClientConnectionFactory.builder()
                    .http1Config(Http1Config.custom().setMaxLineLength(MAX_HEADER_LINE).build())
                    .build())
            .build();
    CloseableHttpClient client =
        HttpClientBuilder.create()
            .setConnectionManager(pool)
            .setRequestExecutor(new ConnectedAddressCheck(key.policy()))
            .setRoutePlanner(new DefaultRoutePlanner(DefaultSchemePortResolver.INSTANCE))
            .disableRedirectHandling()
            .disableAutomaticRetries()
            .disableContentCompression()
            .disableCookieManagement()
            .disableAuthCaching()
            .disableConnectionState()
            .build();
    TIMER.scheduleWithFixedDelay(
        () -> {
          pool.closeExpired();
          pool.closeIdle(MAX_IDLE);
        },
        EVICT_EVERY_SECONDS,
        EVICT_EVERY_SECONDS,
        TimeUnit.SECONDS);
    return client;
  }

  /**
   * A pool whose plain sockets never go through a proxy (the extension point the builder offers).
   */
  private static final class DirectSockets extends PoolingHttpClientConnectionManagerBuilder {
    @Override
    protected HttpClientConnectionOperator createConnectionOperator(
        SchemePortResolver ports, DnsResolver dns, TlsSocketStrategy tls) {
      return new DefaultHttpClientConnectionOperator(
          HttpClients::directSocket,
          ports,
          dns,
          RegistryBuilder.<TlsSocketStrategy>create().register(URIScheme.HTTPS.id, tls).build());
    }
  }

  /**
   * A plain socket that never goes through a SOCKS proxy: {@code new Socket()} would ask the JVM's
   * proxy selector ({@code socksProxyHost}) on connect.
   */
  private static Socket directSocket(Proxy ignored) {
    return new Socket(Proxy.NO_PROXY);
  }

  private static ScheduledThreadPoolExecutor timer() {
    ScheduledThreadPoolExecutor timer =
        new ScheduledThreadPoolExecutor(
            1,
            task -> {
              Thread thread = new Thread(task, "bloom-http-deadlines");
              thread.setDaemon(true);
              return thread;
            });
    // Most deadlines are cancelled when their request ends: drop them at once, not when due.
    timer.setRemoveOnCancelPolicy(true);
    return timer;
  }
}
