package io.bloomoperator.testing.servers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A listening socket that counts the connections made to it and closes each at once: where a test
 * points a client at an address it must not reach (e.g. what a broker advertises, {@link
 * KafkaServer.Options#advertising}), the count shows whether the client tried. {@link #silent}
 * keeps each connection open instead and never answers: a server that hangs (a black-holed broker),
 * the worst a client's timeouts meet.
 */
public final class ConnectionCounter implements AutoCloseable {

  private final ServerSocket socket;
  private final AtomicInteger accepted = new AtomicInteger();
  private final Thread acceptor;
  private final boolean holding;
  private final List<Socket> held = new ArrayList<>();

  private ConnectionCounter(ServerSocket socket, boolean holding) {
    this.socket = socket;
    this.holding = holding;
    this.acceptor = new Thread(this::acceptAll, "connection-counter-" + socket.getLocalPort());
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /**
   * Listens on a free port of {@code host}; any address of 127.0.0.0/8 works on Linux without
   * set-up (all of it is routed to the loopback interface).
   */
  public static ConnectionCounter open(String host) {
    return listen(host, false);
  }

  /**
   * Listens on a free port of {@code host}, accepts every connection, reads nothing and answers
   * nothing until {@link #close()}.
   */
  public static ConnectionCounter silent(String host) {
    return listen(host, true);
  }

  private static ConnectionCounter listen(String host, boolean holding) {
    try {
      return new ConnectionCounter(new ServerSocket(0, 50, InetAddress.getByName(host)), holding);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot listen on " + host, e);
    }
  }

  /** {@code host:port}, as a client's server list names it. */
  public String address() {
    return host() + ":" + port();
  }

  public String host() {
    return socket.getInetAddress().getHostAddress();
  }

  public int port() {
    return socket.getLocalPort();
  }

  /** The connections accepted so far. */
  public int count() {
    return accepted.get();
  }

  @Override
  public void close() {
    try {
      socket.close();
      acceptor.join(5_000);
      synchronized (held) {
        for (Socket connection : held) {
          connection.close();
        }
        held.clear();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void acceptAll() {
    while (!socket.isClosed()) {
      try {
        Socket connection = socket.accept();
        accepted.incrementAndGet();
        if (holding) {
          synchronized (held) {
            held.add(connection);
          }
        } else {
          connection.close();
        }
      } catch (IOException e) {
        // Closed (the loop ends), or one connection failed while being accepted.
      }
    }
  }
}
