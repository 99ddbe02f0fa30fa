package io.bloomoperator.source;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Proxy;
import java.net.Socket;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import okhttp3.Call;
import okhttp3.Connection;
import okhttp3.Dns;
import okhttp3.EventListener;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Response;

/**
 * The HTTP clients of http sources: all derived from one client, so they share one connection pool
 * and one dispatcher however many sources and timeouts there are (OkHttp's derived clients start no
 * threads of their own), and all confined by an {@link EgressPolicy}.
 *
 * <p>The policy is enforced where the address is known. Host names are resolved by a {@link Dns}
 * that refuses a host when any of its addresses is refused; with no proxy, OkHttp connects only to
 * addresses that {@code Dns} returned, so a DNS answer that changes between a check and the
 * connection (DNS rebinding) cannot slip through. IP literals never reach {@code Dns} (OkHttp
 * connects to them directly): {@link HttpSource} checks them before each request. Finally a network
 * interceptor checks the remote address of the socket each request is about to be sent on, so
 * nothing is sent to a refused address whatever path led there.
 *
 * <p>No proxy is used, whatever the JVM's proxy settings: a proxy would connect on the operator's
 * behalf to addresses this class never sees.
 */
final class HttpClients {

  /** Resolves host names; the system resolver except in tests. */
  interface Resolver {
    List<InetAddress> resolve(String host) throws UnknownHostException;
  }

  /** The JVM's resolver (one instance, so pooled connections are shared between sources). */
  static final Resolver SYSTEM = host -> List.of(InetAddress.getAllByName(host));

  /** A host or address refused by the policy; fatal, OkHttp does not retry it elsewhere. */
  static final class AddressRefused extends UnknownHostException {
    private final EgressPolicy.Refusal refusal;

    AddressRefused(EgressPolicy.Refusal refusal) {
      super("address not allowed: " + refusal.text());
      this.refusal = refusal;
    }

    EgressPolicy.Refusal refusal() {
      return refusal;
    }
  }

  private static final OkHttpClient SHARED =
      new OkHttpClient.Builder()
          .proxy(Proxy.NO_PROXY)
          // Redirects are followed by HttpSource itself: each hop is checked against the policy and
          // the Secret's headers are sent to the URL's own origin only.
          .followRedirects(false)
          .followSslRedirects(false)
          // HTTP/1.1: no HTTP/2 flow-control window limiting a multi-gigabyte download, and no
          // connection coalescing across host names.
          .protocols(List.of(Protocol.HTTP_1_1))
          .build();

  private HttpClients() {}

  /** A client with these timeouts, connecting only where the policy allows. */
  static OkHttpClient client(
      EgressPolicy policy, Resolver resolver, Duration connectTimeout, Duration readTimeout) {
    return SHARED
        .newBuilder()
        .dns(new PolicyDns(policy, resolver))
        .addNetworkInterceptor(new ConnectedAddressCheck(policy))
        .connectTimeout(connectTimeout)
        .readTimeout(readTimeout)
        .writeTimeout(readTimeout)
        .eventListenerFactory(
            call -> {
              ConnectWatch watch = call.request().tag(ConnectWatch.class);
              return watch != null ? watch : EventListener.NONE;
            })
        .build();
  }

  /**
   * Tells whether a call got a connection, so that a timeout can be named: before, it is the
   * connect timeout; after, the read timeout. Attach one per request as its tag.
   */
  static final class ConnectWatch extends EventListener {
    private volatile boolean connected;

    @Override
    public void connectionAcquired(Call call, Connection connection) {
      connected = true;
    }

    boolean connected() {
      return connected;
    }
  }

  /**
   * Refuses a host when the policy refuses one of its addresses. A record: OkHttp pools connections
   * by address, which includes the {@code Dns}, so equal policies share them.
   */
  record PolicyDns(EgressPolicy policy, Resolver resolver) implements Dns {
    @Override
    public List<InetAddress> lookup(String host) throws UnknownHostException {
      List<InetAddress> addresses = resolver.resolve(host);
      for (InetAddress address : addresses) {
        Optional<EgressPolicy.Refusal> refusal = policy.check(host, address);
        if (refusal.isPresent()) {
          throw new AddressRefused(refusal.get());
        }
      }
      return addresses;
    }
  }

  /** Checks the address the request is about to be sent to, as the socket reports it. */
  record ConnectedAddressCheck(EgressPolicy policy) implements Interceptor {
    @Override
    public Response intercept(Chain chain) throws IOException {
      Connection connection = chain.connection();
      Socket socket = connection == null ? null : connection.socket();
      InetAddress remote = socket == null ? null : socket.getInetAddress();
      if (remote == null) {
        throw new AddressRefused(EgressPolicy.Refusal.DENIED);
      }
      Optional<EgressPolicy.Refusal> refusal = policy.check(chain.request().url().host(), remote);
      if (refusal.isPresent()) {
        throw new AddressRefused(refusal.get());
      }
      return chain.proceed(chain.request());
    }
  }
}
