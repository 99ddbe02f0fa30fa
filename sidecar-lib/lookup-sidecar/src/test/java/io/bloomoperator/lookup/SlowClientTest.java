package io.bloomoperator.lookup;

import static io.bloomoperator.lookup.LookupClient.present;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Clients that hold a connection without finishing their request: they cost one request thread
 * each, for at most the request timeout (2 s here), and never the answers of other clients; when
 * every thread is held, others get a 503 at once instead of waiting. The filter is never published:
 * it answers fail-open, which is enough to see who gets an answer and when.
 */
@RealKubernetes
class SlowClientTest {

  @Test
  void slowClientsDoNotBlockOthersAndAreCutAtTheRequestTimeout(
      KubernetesClient client, TestNamespace ns) throws Exception {
    try (LookupSidecar sidecar =
        LookupSidecar.start(
            LookupSidecarTest.config("--filter", ns.name() + "/ids", "--threads", "4"),
            client,
            Map.of())) {
      LookupClient http = new LookupClient(sidecar.address());
      List<Socket> slow = new ArrayList<>();
      // Two that never finish their headers, one that never finishes its body.
      slow.add(
          open(sidecar.address(), "GET /v1/filters/ids/contains?key=a HTTP/1.1\r\nHost: x\r\n"));
      slow.add(open(sidecar.address(), "GET /readyz HTTP/1.1\r\nHo"));
      slow.add(
          open(
              sidecar.address(),
              "POST /v1/filters/ids/contains HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
                  + "Content-Length: 1000\r\n\r\nkey-1\nkey-"));
      long start = System.nanoTime();
      for (int i = 0; i < 50; i++) {
        long one = System.nanoTime();
        assertThat(present(http.contains("ids", "k" + i))).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - one)).isLessThan(Duration.ofSeconds(1));
      }
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));

      // The server, not the client, ends each slow request: within the 2 s timeout plus the
      // JDK server's 1 s check interval.
      for (Socket socket : slow) {
        assertThat(closedByServerWithin(socket, Duration.ofSeconds(6)))
            .as("slow connection closed by the server")
            .isTrue();
      }
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(6));
    }
  }

  @Test
  void whenEveryThreadIsHeldOthersGet503AtOnce(KubernetesClient client, TestNamespace ns)
      throws Exception {
    try (LookupSidecar sidecar =
        LookupSidecar.start(
            LookupSidecarTest.config(
                "--filter", ns.name() + "/ids", "--threads", "1", "--queue", "0"),
            client,
            Map.of())) {
      LookupClient http = new LookupClient(sidecar.address());
      assertThat(http.contains("ids", "a").statusCode()).isEqualTo(200);
      try (Socket holder = open(sidecar.address(), "GET /livez HTTP/1.1\r\nHo")) {
        // Once the held request has reached the only thread, everything else is refused. How soon
        // the server hands the held connection to that thread is set-up, not what is asserted (a
        // cold JVM on a busy 2-core runner took over 1 s): the refusal below must be at once.
        await().atMost(Duration.ofSeconds(5)).until(() -> http.get("/livez").statusCode() == 503);
        long start = System.nanoTime();
        HttpResponse<String> refused = http.contains("ids", "a");
        assertThat(refused.statusCode()).isEqualTo(503);
        assertThat(refused.body()).contains("overloaded");
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(1));
        assertThat(http.get("/metrics").statusCode()).isEqualTo(503);

        assertThat(closedByServerWithin(holder, Duration.ofSeconds(6))).isTrue();
      }
      // Once the holder is cut, answers come back, and the refusals were counted. The server
      // closes the socket before its thread is back in the pool, so allow that moment.
      await()
          .atMost(Duration.ofSeconds(2))
          .until(() -> http.contains("ids", "a").statusCode() == 200);
      assertThat(http.get("/metrics").body())
          .containsPattern("bloomlookup_overloaded_total ([3-9]|[1-9][0-9]+)\\.0");
    }
  }

  @Test
  void aHugeStreamedBodyIsRefusedWithoutReadingIt(KubernetesClient client, TestNamespace ns)
      throws Exception {
    try (LookupSidecar sidecar =
        LookupSidecar.start(
            LookupSidecarTest.config("--filter", ns.name() + "/ids"), client, Map.of())) {
      AtomicLong sent = new AtomicLong();
      try (Socket socket = new Socket()) {
        socket.connect(sidecar.address(), 5_000);
        socket.setSoTimeout(10_000);
        OutputStream out = socket.getOutputStream();
        out.write(
            ("POST /v1/filters/ids/contains HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        // Up to 256 MiB of short keys, written while the answer is read on this thread.
        Thread writer =
            new Thread(
                () -> {
                  byte[] chunk = chunk(64 * 1024);
                  try {
                    for (int i = 0; i < 4 * 1024; i++) {
                      out.write(chunk);
                      sent.addAndGet(64 * 1024);
                    }
                  } catch (IOException expected) {
                    // the server closed the connection
                  }
                });
        writer.setDaemon(true);
        writer.start();
        String status = readLine(socket.getInputStream());
        assertThat(status).startsWith("HTTP/1.1 413");
        writer.join(10_000);
        assertThat(writer.isAlive()).as("the server stopped reading").isFalse();
      }
      // 1 MiB read, the JDK server's 64 KiB drain, and the sockets' buffers: far from 256 MiB.
      assertThat(sent.get()).isLessThan(64L << 20);
    }
  }

  /** One chunk of chunked transfer coding holding lines of "key-n". */
  private static byte[] chunk(int size) {
    byte[] data =
        "key-0123456789\n"
            .repeat(size / 15 + 1)
            .substring(0, size)
            .getBytes(StandardCharsets.US_ASCII);
    byte[] head = (Integer.toHexString(size) + "\r\n").getBytes(StandardCharsets.US_ASCII);
    byte[] chunk = new byte[head.length + size + 2];
    System.arraycopy(head, 0, chunk, 0, head.length);
    System.arraycopy(data, 0, chunk, head.length, size);
    chunk[chunk.length - 2] = '\r';
    chunk[chunk.length - 1] = '\n';
    return chunk;
  }

  private static Socket open(InetSocketAddress address, String partialRequest) throws IOException {
    Socket socket = new Socket();
    socket.connect(address, 5_000);
    socket.getOutputStream().write(partialRequest.getBytes(StandardCharsets.US_ASCII));
    socket.getOutputStream().flush();
    return socket;
  }

  /** Whether the server closes the connection (EOF or reset) within {@code limit}. */
  private static boolean closedByServerWithin(Socket socket, Duration limit) throws IOException {
    socket.setSoTimeout((int) limit.toMillis());
    try {
      InputStream in = socket.getInputStream();
      while (in.read() >= 0) {
        // a 4xx/5xx answer may come first; the close is what counts
      }
      return true;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (SocketException e) {
      return true; // reset
    } finally {
      socket.close();
    }
  }

  private static String readLine(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    for (int c = in.read(); c >= 0 && c != '\n'; c = in.read()) {
      line.append((char) c);
    }
    return line.toString().strip();
  }
}
