package io.bloomoperator.source;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import javax.net.SocketFactory;

/**
 * The socket factory PgJDBC and MariaDB Connector/J are told to use (connection property {@code
 * socketFactory}, which the URL allowlist keeps users from setting): its sockets obey the {@link
 * JdbcConnectionGuard} of the read. PgJDBC creates one factory per connection (on a thread of its
 * own, so it is told the guard's token) and reuses it for cancel requests from other threads;
 * MariaDB creates one per socket, on the connecting thread. Without a guard, no socket connects.
 */
public final class GuardedSocketFactory extends SocketFactory {

  private final JdbcConnectionGuard guard;

  /** Called by MariaDB Connector/J, by reflection, on the thread that connects. */
  public GuardedSocketFactory() {
    this.guard = JdbcConnectionGuard.current();
  }

  /**
   * Called by PgJDBC, by reflection, with {@code socketFactoryArg}: it connects on a thread of its
   * own, so the guard is found by its token ({@link JdbcConnectionGuard#token()}).
   */
  public GuardedSocketFactory(String token) {
    this.guard = JdbcConnectionGuard.byToken(token);
  }

  @Override
  public Socket createSocket() {
    return JdbcConnectionGuard.socket(guard);
  }

  @Override
  public Socket createSocket(String host, int port) throws IOException {
    return connected(new InetSocketAddress(host, port));
  }

  @Override
  public Socket createSocket(String host, int port, InetAddress localHost, int localPort)
      throws IOException {
    return connected(new InetSocketAddress(host, port));
  }

  @Override
  public Socket createSocket(InetAddress host, int port) throws IOException {
    return connected(new InetSocketAddress(host, port));
  }

  @Override
  public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort)
      throws IOException {
    return connected(new InetSocketAddress(address, port));
  }

  /** No local address is bound: the operator chooses how it leaves its pod, not the driver. */
  private Socket connected(InetSocketAddress target) throws IOException {
    Socket socket = createSocket();
    try {
      socket.connect(target);
      return socket;
    } catch (IOException | RuntimeException e) {
      socket.close();
      throw e;
    }
  }
}
