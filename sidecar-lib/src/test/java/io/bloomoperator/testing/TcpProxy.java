package io.bloomoperator.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP pass-through in front of the API server that a test can cut and restore: while cut, every
 * open connection is dropped and new ones are refused, which is what a client sees when the API
 * server restarts or the network between them fails. TLS passes through untouched; the bytes in
 * each direction are counted (benchmarks measure what a client moves on the wire).
 */
public final class TcpProxy implements AutoCloseable {

  private final String targetHost;
  private final int targetPort;
  private final int port;
  private final List<Socket> open = new CopyOnWriteArrayList<>();
  private volatile ServerSocket server;
  private final java.util.concurrent.atomic.AtomicInteger accepted =
      new java.util.concurrent.atomic.AtomicInteger();
  private final AtomicLong bytesToTarget = new AtomicLong();
  private final AtomicLong bytesFromTarget = new AtomicLong();

  public TcpProxy(String targetHost, int targetPort) {
    this.targetHost = targetHost;
    this.targetPort = targetPort;
    try (ServerSocket probe = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      this.port = probe.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    restore();
  }

  /** The local port clients connect to. */
  public int port() {
    return port;
  }

  /** Connections accepted so far: proof that the client really goes through the proxy. */
  public int accepted() {
    return accepted.get();
  }

  /**
   * Bytes passed from clients to the target so far (requests, as sent on the wire: TLS included).
   */
  public long bytesToTarget() {
    return bytesToTarget.get();
  }

  /** Bytes passed from the target to clients so far (responses and watch events, TLS included). */
  public long bytesFromTarget() {
    return bytesFromTarget.get();
  }

  /** Drops every connection and refuses new ones until {@link #restore()}. */
  public synchronized void cut() {
    closeQuietly(server);
    server = null;
    open.forEach(TcpProxy::closeQuietly);
    open.clear();
  }

  /** Accepts connections again, on the same port. */
  public synchronized void restore() {
    if (server != null) {
      return;
    }
    try {
      ServerSocket socket = new ServerSocket();
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      server = socket;
      Thread acceptor = new Thread(() -> accept(socket), "tcp-proxy-accept");
      acceptor.setDaemon(true);
      acceptor.start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void accept(ServerSocket socket) {
    while (!socket.isClosed()) {
      try {
        Socket client = socket.accept();
        accepted.incrementAndGet();
        Socket upstream = new Socket(targetHost, targetPort);
        open.add(client);
        open.add(upstream);
        pump(client, upstream, bytesToTarget);
        pump(upstream, client, bytesFromTarget);
      } catch (IOException e) {
        return; // cut
      }
    }
  }

  private void pump(Socket from, Socket to, AtomicLong counter) {
    Thread t =
        new Thread(
            () -> {
              byte[] buffer = new byte[64 * 1024];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                  out.write(buffer, 0, n);
                  out.flush();
                  counter.addAndGet(n);
                }
              } catch (IOException e) {
                // the other side went away or the proxy was cut
              } finally {
                closeQuietly(from);
                closeQuietly(to);
              }
            },
            "tcp-proxy-pump");
    t.setDaemon(true);
    t.start();
  }

  private static void closeQuietly(AutoCloseable closeable) {
    if (closeable == null) {
      return;
    }
    try {
      closeable.close();
    } catch (Exception e) {
      // nothing to do
    }
  }

  @Override
  public void close() {
    cut();
  }
}
