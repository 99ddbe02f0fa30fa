package io.bloomoperator.source;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import javax.net.SocketFactory;

/**
 * The socket factory PgJDBC and MariaDB Connector/J are told to use (connection property {@code
 * socketFactory}, which the URL allowlist keeps users from setting): its sockets obey the {@link
 * JdbcConnectionGuard} bound to the thread that created the factory. PgJDBC creates one factory per
 * connection and reuses it for cancel requests from other threads; MariaDB creates one per socket.
 */
public final class GuardedSocketFactory extends SocketFactory {

  private final JdbcConnectionGuard guard = JdbcConnectionGuard.current();

  /** Called by the drivers, by reflection. */
  public GuardedSocketFactory() {}

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
