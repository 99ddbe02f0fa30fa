package io.bloomoperator.source;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Optional;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.impl.io.HttpRequestExecutor;
import org.apache.hc.core5.http.io.HttpClientConnection;
import org.apache.hc.core5.http.io.HttpResponseInformationCallback;
import org.apache.hc.core5.http.protocol.HttpContext;
import org.apache.hc.core5.net.URIAuthority;

/**
 * The last check before a request leaves: the remote address of the connection it is about to be
 * written to, new or pooled, as the socket reports it, is judged by the egress policy, so nothing
 * is sent to a refused address whatever path led to the connection. It is also where a request is
 * known to have a connection, which {@link #connected} tells afterwards: a timeout before that was
 * the connect timeout, after it the read timeout.
 */
final class ConnectedAddressCheck extends HttpRequestExecutor {

  private static final String CONNECTED = ConnectedAddressCheck.class.getName() + ".connected";

  private final EgressPolicy policy;

  ConnectedAddressCheck(EgressPolicy policy) {
    this.policy = policy;
  }

  /** Whether the request of {@code context} got as far as a connection (and passed the check). */
  static boolean connected(HttpContext context) {
    return context.getAttribute(CONNECTED) != null;
  }

  @Override
  public ClassicHttpResponse execute(
      ClassicHttpRequest request,
      HttpClientConnection connection,
      HttpResponseInformationCallback informationCallback,
      HttpContext context)
      throws IOException, HttpException {
    SocketAddress remote = connection.getRemoteAddress();
    if (!(remote instanceof InetSocketAddress inet) || inet.getAddress() == null) {
      throw refused(EgressPolicy.Refusal.DENIED);
    }
    URIAuthority authority = request.getAuthority();
    String host = authority == null ? inet.getAddress().getHostAddress() : authority.getHostName();
    Optional<EgressPolicy.Refusal> refusal = policy.check(host, inet.getAddress());
    if (refusal.isPresent()) {
      throw refused(refusal.get());
    }
    context.setAttribute(CONNECTED, Boolean.TRUE);
    return super.execute(request, connection, informationCallback, context);
  }

  private static EgressCheckedDns.Refused refused(EgressPolicy.Refusal refusal) {
    return new EgressCheckedDns.Refused(
        "the connection's address is refused by the egress policy; nothing was sent", refusal);
  }
}
