package io.bloomoperator.testing.proxy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP pass-through on 127.0.0.1 in front of a server (a database) that breaks the way networks
 * and servers break, for source-outage tests. Unlike sidecar-lib's {@code TcpProxy} (cut and
 * restore only) it can also stall and corrupt a connection part-way through an answer. A fault
 * applies to connections accepted after it is set; {@link Mode#DOWN} also drops the open ones.
 */
public final class FaultInjectingProxy implements AutoCloseable {

  /** What the proxy does to the server's answer on each new connection. */
  public enum Mode {
    /** Passes everything. */
    PASS,
    /** Refuses connections (the listening socket is closed) and drops open ones. */
    DOWN,
    /** Passes the first bytes of the answer, then holds the rest back (connection stays open). */
    STALL,
    /** Passes the first bytes of the answer, then random bytes, then closes the connection. */
    GARBAGE
  }

  private final String targetHost;
  private final int targetPort;
  private final int port;
  private final int passBytes;
  private final List<Socket> open = new CopyOnWriteArrayList<>();
  private final AtomicInteger accepted = new AtomicInteger();
  private volatile Mode mode = Mode.PASS;
  private ServerSocket server;

  /**
   * @param passBytes how many bytes of the server's answer STALL and GARBAGE let through on each
   *     connection before they strike (past the login, into a result)
   */
  public FaultInjectingProxy(String targetHost, int targetPort, int passBytes) {
    this.targetHost = targetHost;
    this.targetPort = targetPort;
    this.passBytes = passBytes;
    try (ServerSocket probe = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      this.port = probe.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    listen();
  }

  public int port() {
    return port;
  }

  /** Connections accepted so far (attempts the client made while not DOWN). */
  public int accepted() {
    return accepted.get();
  }

  public synchronized void mode(Mode next) {
    mode = next;
    if (next == Mode.DOWN) {
      closeQuietly(server);
      server = null;
      open.forEach(FaultInjectingProxy::closeQuietly);
      open.clear();
    } else {
      listen();
    }
  }

  private synchronized void listen() {
    if (server != null) {
      return;
    }
    try {
      ServerSocket socket = new ServerSocket();
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      server = socket;
      Thread acceptor = new Thread(() -> accept(socket), "fault-proxy-accept");
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
        Mode now = mode;
        pump(client, upstream, Mode.PASS, accepted.get());
        pump(upstream, client, now, accepted.get());
      } catch (IOException e) {
        return; // DOWN, or closed
      }
    }
  }

  private void pump(Socket from, Socket to, Mode fault, int connection) {
    Thread t =
        new Thread(
            () -> {
              byte[] buffer = new byte[16 * 1024];
              long passed = 0;
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                  if (fault != Mode.PASS && passed + n > passBytes) {
                    out.write(buffer, 0, (int) (passBytes - passed));
                    out.flush();
                    strike(fault, out, to, connection);
                    return;
                  }
                  out.write(buffer, 0, n);
                  out.flush();
                  passed += n;
                }
              } catch (IOException e) {
                // one side went away or the proxy went DOWN
              } finally {
                closeQuietly(from);
                closeQuietly(to);
              }
            },
            "fault-proxy-pump");
    t.setDaemon(true);
    t.start();
  }

  private void strike(Mode fault, OutputStream out, Socket client, int connection)
      throws IOException {
    if (fault == Mode.GARBAGE) {
      byte[] garbage = new byte[4096];
      new Random(connection).nextBytes(garbage);
      out.write(garbage);
      out.flush();
      return; // the finally block closes both sides
    }
    // STALL: hold the connection open and send nothing more until the client gives up (the other
    // pump sees it close and closes the socket) or the proxy goes DOWN.
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.MINUTES.toNanos(10);
    while (!client.isClosed() && System.nanoTime() < deadline) {
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
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
  public synchronized void close() {
    mode(Mode.DOWN);
  }
}
