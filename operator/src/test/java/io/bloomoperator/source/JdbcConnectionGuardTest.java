package io.bloomoperator.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import org.junit.jupiter.api.Test;

/** The sockets drivers get from the operator, on a loopback server of the test's own. */
class JdbcConnectionGuardTest {

  private static final EgressPolicy LOOPBACK = EgressPolicy.of("127.0.0.0/8", null);

  /** A server that sends {@code bytes} bytes to its first client, then closes. */
  private static ServerSocket sending(int bytes) throws IOException {
    ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    Thread thread =
        new Thread(
            () -> {
              try (Socket client = server.accept();
                  OutputStream out = client.getOutputStream()) {
                out.write(new byte[bytes]);
              } catch (IOException ignored) {
                // The test sees what arrived.
              }
            });
    thread.setDaemon(true);
    thread.start();
    return server;
  }

  private static InetSocketAddress address(ServerSocket server) {
    return new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort());
  }

  /**
   * PgJDBC skips a field it could not allocate until skip() has covered it; a skip that returns 0
   * at the end of the stream kept it spinning forever. Here the end is an error.
   */
  @Test
  void skippingPastTheEndIsAnErrorNotZero() throws IOException {
    JdbcConnectionGuard guard = new JdbcConnectionGuard(LOOPBACK, "127.0.0.1", 1 << 20);
    try (ServerSocket server = sending(10);
        Socket socket = JdbcConnectionGuard.socket(guard)) {
      socket.connect(address(server), 5_000);
      InputStream in = socket.getInputStream();
      long skipped = 0;
      while (skipped < 10) {
        long n = in.skip(100);
        assertThat(n).isPositive();
        skipped += n;
      }
      assertThatThrownBy(() -> in.skip(100)).isInstanceOf(EOFException.class);
    }
  }

  @Test
  void aFetchOverTheLimitFailsAndIsRemembered() throws IOException {
    JdbcConnectionGuard guard = new JdbcConnectionGuard(LOOPBACK, "127.0.0.1", 1000);
    try (ServerSocket server = sending(5000);
        Socket socket = JdbcConnectionGuard.socket(guard)) {
      socket.connect(address(server), 5_000);
      InputStream in = socket.getInputStream();
      assertThat(in.readNBytes(1000)).hasSize(1000);
      assertThat(guard.batchExceeded()).isFalse();
      assertThatThrownBy(() -> in.readNBytes(1)).isInstanceOf(IOException.class);
      assertThat(guard.batchExceeded()).isTrue();
    }
  }

  @Test
  void aNewFetchMayBringTheLimitAgain() throws IOException {
    JdbcConnectionGuard guard = new JdbcConnectionGuard(LOOPBACK, "127.0.0.1", 1000);
    try (ServerSocket server = sending(3000);
        Socket socket = JdbcConnectionGuard.socket(guard)) {
      socket.connect(address(server), 5_000);
      InputStream in = socket.getInputStream();
      for (int fetch = 0; fetch < 3; fetch++) {
        guard.newFetch();
        assertThat(in.readNBytes(1000)).hasSize(1000);
      }
      assertThat(guard.batchExceeded()).isFalse();
    }
  }

  @Test
  void refusedAddressesAndUnguardedSocketsDoNotConnect() throws IOException {
    try (ServerSocket server = sending(1)) {
      JdbcConnectionGuard guard =
          new JdbcConnectionGuard(EgressPolicy.defaults(), "127.0.0.1", 1000);
      try (Socket socket = JdbcConnectionGuard.socket(guard)) {
        assertThatThrownBy(() -> socket.connect(address(server), 5_000))
            .isInstanceOf(ConnectException.class);
      }
      assertThat(guard.refusal()).isEqualTo(EgressPolicy.Refusal.LOOPBACK);
      try (Socket socket = JdbcConnectionGuard.socket(null)) {
        assertThatThrownBy(() -> socket.connect(address(server), 5_000))
            .isInstanceOf(ConnectException.class);
      }
      assertThat(JdbcConnectionGuard.byToken("no-such-token")).isNull();
      try (Socket socket = new GuardedSocketFactory("no-such-token").createSocket()) {
        assertThatThrownBy(() -> socket.connect(address(server), 5_000))
            .as("a factory whose guard is gone connects nowhere")
            .isInstanceOf(ConnectException.class);
      }
    }
  }
}
