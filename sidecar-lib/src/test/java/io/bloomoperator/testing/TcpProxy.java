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
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP pass-through on 127.0.0.1 in front of a server (the API server, a database) that breaks the
 * way networks and servers break: it can be cut and restored (every open connection dropped, new
 * ones refused: an API-server restart or a network failure), and it can stall or corrupt the
 * server's answer part-way through. A fault applies to connections accepted after it is set; {@link
 * Mode#DOWN} also drops the open ones. TLS passes through untouched; the bytes in each direction
 * are counted (benchmarks measure what a client moves on the wire).
 */
public final class TcpProxy implements AutoCloseable {

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
  private final long passBytes;
  private final List<Socket> open = new CopyOnWriteArrayList<>();
  private final AtomicInteger accepted = new AtomicInteger();
  private final AtomicLong bytesToTarget = new AtomicLong();
  private final AtomicLong bytesFromTarget = new AtomicLong();
  private volatile Mode mode = Mode.PASS;

  /** Bytes per second each connection may send to the target; 0: as fast as it can. */
  private volatile long uploadRate;

  private final AtomicInteger cutsLeft = new AtomicInteger();
  private ServerSocket server;

  /** A proxy that only passes, or is cut ({@link #cut()}, {@link #restore()}). */
  public TcpProxy(String targetHost, int targetPort) {
    this(targetHost, targetPort, 0);
  }

  /**
   * @param passBytes how many bytes of the server's answer {@link Mode#STALL} and {@link
   *     Mode#GARBAGE} let through on each connection before they strike (past a login, into a
   *     result)
   */
  public TcpProxy(String targetHost, int targetPort, int passBytes) {
    this.targetHost = targetHost;
    this.targetPort = targetPort;
    this.passBytes = passBytes;
    try (ServerSocket probe = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      this.port = probe.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    mode(Mode.PASS);
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

  /** Drops every connection and refuses new ones until {@link #restore()}: {@link Mode#DOWN}. */
  public void cut() {
    mode(Mode.DOWN);
  }

  /** Accepts connections again, on the same port, and passes everything: {@link Mode#PASS}. */
  public void restore() {
    mode(Mode.PASS);
  }

  /**
   * Closes each of the next {@code connections} connections accepted after the first bytes of the
   * answer (a download cut off mid-way), whatever the mode; later ones pass.
   */
  public void cutNext(int connections) {
    cutsLeft.set(connections);
  }

  /**
   * Slows what every connection sends to the target (open ones too) to {@code bytesPerSecond}, e.g.
   * uploads to a store on a slow link, so that a test can act while they are under way; 0 lifts it.
   */
  public void throttleUploads(long bytesPerSecond) {
    uploadRate = bytesPerSecond;
  }

  /** Applies {@code next} to the connections accepted from now on ({@code DOWN}: to all). */
  public synchronized void mode(Mode next) {
    mode = next;
    if (next == Mode.DOWN) {
      closeQuietly(server);
      server = null;
      open.forEach(TcpProxy::closeQuietly);
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
        int connection = accepted.incrementAndGet();
        Socket upstream = new Socket(targetHost, targetPort);
        open.add(client);
        open.add(upstream);
        Mode now = mode;
        boolean cut = cutsLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0;
        pump(client, upstream, Mode.PASS, false, connection, bytesToTarget);
        pump(upstream, client, cut ? Mode.GARBAGE : now, cut, connection, bytesFromTarget);
      } catch (IOException e) {
        return; // DOWN, or closed
      }
    }
  }

  private void pump(
      Socket from, Socket to, Mode fault, boolean cut, int connection, AtomicLong counter) {
    Thread t =
        new Thread(
            () -> {
              byte[] buffer = new byte[64 * 1024];
              long passed = 0;
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                  if (fault != Mode.PASS && passed + n > passBytes) {
                    out.write(buffer, 0, (int) (passBytes - passed));
                    out.flush();
                    counter.addAndGet(passBytes - passed);
                    if (!cut) {
                      strike(fault, out, to, connection);
                    }
                    return;
                  }
                  out.write(buffer, 0, n);
                  out.flush();
                  counter.addAndGet(n);
                  passed += n;
                  long rate = uploadRate;
                  if (counter == bytesToTarget && rate > 0) {
                    Thread.sleep(n * 1000L / rate);
                  }
                }
              } catch (IOException e) {
                // one side went away or the proxy went DOWN
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              } finally {
                closeQuietly(from);
                closeQuietly(to);
              }
            },
            "tcp-proxy-pump");
    t.setDaemon(true);
    t.start();
  }

  private static void strike(Mode fault, OutputStream out, Socket client, int connection)
      throws IOException {
    if (fault == Mode.GARBAGE) {
      byte[] garbage = new byte[4096];
      new Random(connection).nextBytes(garbage);
      out.write(garbage);
      out.flush();
      return; // the pump's finally block closes both sides
    }
    // STALL: hold the connection open and send nothing more until the client gives up (the other
    // pump sees it close and closes the socket) or the proxy goes DOWN.
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
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
  public void close() {
    cut();
  }
}
