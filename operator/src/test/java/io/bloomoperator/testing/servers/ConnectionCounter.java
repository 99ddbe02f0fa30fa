package io.bloomoperator.testing.servers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A listening socket that counts the connections made to it and closes each at once: where a test
 * points a client at an address it must not reach (e.g. what a broker advertises, {@link
 * KafkaServer.Options#advertising}), the count shows whether the client tried.
 */
public final class ConnectionCounter implements AutoCloseable {

  private final ServerSocket socket;
  private final AtomicInteger accepted = new AtomicInteger();
  private final Thread acceptor;

  private ConnectionCounter(ServerSocket socket) {
    this.socket = socket;
    this.acceptor = new Thread(this::acceptAll, "connection-counter-" + socket.getLocalPort());
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /**
   * Listens on a free port of {@code host}; any address of 127.0.0.0/8 works on Linux without
   * set-up (all of it is routed to the loopback interface).
   */
  public static ConnectionCounter open(String host) {
    try {
      return new ConnectionCounter(new ServerSocket(0, 50, InetAddress.getByName(host)));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot listen on " + host, e);
    }
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
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void acceptAll() {
    while (!socket.isClosed()) {
      try (Socket connection = socket.accept()) {
        accepted.incrementAndGet();
      } catch (IOException e) {
        // Closed (the loop ends), or one connection failed while being accepted.
      }
    }
  }
}
