package io.bloomoperator.changes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.source.EgressPolicy;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The guard on connections a client library makes by itself: real sockets to a real listening port,
 * counted on the server side, so "refused" means no connection arrived.
 */
class ConnectGuardTest {

  private ServerSocket server;
  private final AtomicInteger accepted = new AtomicInteger();
  private Thread acceptor;

  @BeforeEach
  void listen() throws IOException {
    server = new ServerSocket();
    server.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
    acceptor =
        new Thread(
            () -> {
              while (!server.isClosed()) {
                try (Socket s = server.accept()) {
                  accepted.incrementAndGet();
                } catch (IOException e) {
                  return;
                }
              }
            });
    acceptor.setDaemon(true);
    acceptor.start();
  }

  @AfterEach
  void close() throws IOException {
    server.close();
  }

  private void connect() throws IOException {
    try (SocketChannel channel = SocketChannel.open()) {
      channel.connect(new InetSocketAddress("127.0.0.1", server.getLocalPort()));
    }
  }

  @Test
  void aGuardedThreadIsRefusedWhatThePolicyDeniesAndNothingArrives() throws Exception {
    ConnectGuard.Guard guard = new ConnectGuard.Guard(EgressPolicy.defaults());
    assertThat(ConnectGuard.available()).isTrue();

    assertThatThrownBy(
            () ->
                ConnectGuard.call(
                    guard,
                    () -> {
                      connect();
                      return null;
                    }))
        .isInstanceOf(SecurityException.class)
        .hasMessageContaining("loopback");

    assertThat(guard.refused()).isEqualTo(1);
    assertThat(guard.lastRefusal()).contains(EgressPolicy.Refusal.LOOPBACK);
    Thread.sleep(200);
    assertThat(accepted).hasValue(0);
  }

  @Test
  void unguardedThreadsAndAllowedAddressesConnect() throws Exception {
    connect(); // not guarded: the operator's own connections are not this guard's business
    ConnectGuard.Guard allowing = new ConnectGuard.Guard(EgressPolicy.of("127.0.0.1/32", null));
    ConnectGuard.call(
        allowing,
        () -> {
          connect();
          return null;
        });
    awaitAccepted(2);
    assertThat(allowing.refused()).isZero();
    assertThat(ConnectGuard.guarded()).isFalse();
  }

  @Test
  void threadsStartedInsideAGuardedCallAreGuardedForTheirWholeLife() throws Exception {
    ConnectGuard.Guard guard = new ConnectGuard.Guard(EgressPolicy.defaults());
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Object go = new Object();
    Thread[] started = new Thread[1];
    ConnectGuard.call(
        guard,
        () -> {
          // Like the Kafka admin client's network thread: started now, connecting later.
          started[0] =
              new Thread(
                  () -> {
                    synchronized (go) {
                      try {
                        go.wait(5_000);
                        connect();
                      } catch (Throwable t) {
                        failure.set(t);
                      }
                    }
                  });
          started[0].start();
          return null;
        });
    assertThat(ConnectGuard.guarded()).isFalse();
    Thread.sleep(100);
    synchronized (go) {
      go.notifyAll();
    }
    started[0].join(5_000);
    assertThat(failure.get()).isInstanceOf(SecurityException.class);
    assertThat(guard.refused()).isEqualTo(1);
    assertThat(accepted).hasValue(0);
  }

  @Test
  void aDeniedHostNameIsRefusedWhenItIsResolved() throws Exception {
    ConnectGuard.Guard guard = new ConnectGuard.Guard(EgressPolicy.of("127.0.0.0/8", "localhost"));
    assertThatThrownBy(() -> ConnectGuard.call(guard, () -> InetAddress.getAllByName("localhost")))
        .isInstanceOf(SecurityException.class);
    assertThat(guard.lastRefusal()).contains(EgressPolicy.Refusal.DENIED);
  }

  private void awaitAccepted(int n) throws InterruptedException {
    for (int i = 0; i < 100 && accepted.get() < n; i++) {
      Thread.sleep(20);
    }
    assertThat(accepted).hasValue(n);
  }
}
