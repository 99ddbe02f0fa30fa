package io.bloomoperator.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.config.Http1Config;
import org.apache.hc.core5.http.impl.io.DefaultBHttpClientConnection;
import org.apache.hc.core5.http.message.BasicClassicHttpRequest;
import org.apache.hc.core5.http.protocol.HttpCoreContext;
import org.apache.hc.core5.net.URIAuthority;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The last check before a request leaves judges the connection it is written to, not how that
 * connection came about: a connection made under another judgement (here: resolved and allowed by a
 * resolver whose policy admits loopback, as a pooled connection was when it was made) gets not a
 * byte of a request under a policy that refuses its address. The server is a raw socket that
 * records every byte it receives.
 */
@Timeout(20)
class ConnectedAddressCheckTest {

  @Test
  void aConnectionToARefusedAddressGetsNothingWhateverLedToIt() throws Exception {
    try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      CompletableFuture<byte[]> received = record(server);
      EgressPolicy permissive = EgressPolicy.of("127.0.0.1/32", null);
      InetAddress allowed =
          EgressCheckedDns.forSources(permissive, EgressCheckedDns.Lookup.SYSTEM)
              .resolve("127.0.0.1")[0];
      DefaultBHttpClientConnection connection = connect(allowed, server.getLocalPort());
      HttpCoreContext context = HttpCoreContext.create();

      assertThatThrownBy(
              () ->
                  new ConnectedAddressCheck(EgressPolicy.defaults())
                      .execute(request(server.getLocalPort()), connection, null, context))
          .isInstanceOf(EgressCheckedDns.Refused.class)
          .satisfies(
              e ->
                  assertThat(((EgressCheckedDns.Refused) e).refusal())
                      .isEqualTo(EgressPolicy.Refusal.LOOPBACK));
      assertThat(ConnectedAddressCheck.connected(context)).as("not counted as connected").isFalse();
      connection.close();
      assertThat(received.get(10, TimeUnit.SECONDS)).as("bytes the server received").isEmpty();
    }
  }

  @Test
  void anAllowedConnectionCarriesTheRequest() throws Exception {
    try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      CompletableFuture<byte[]> received = record(server);
      DefaultBHttpClientConnection connection =
          connect(InetAddress.getLoopbackAddress(), server.getLocalPort());
      HttpCoreContext context = HttpCoreContext.create();
      ClassicHttpResponse response =
          new ConnectedAddressCheck(EgressPolicy.of("127.0.0.1/32", null))
              .execute(request(server.getLocalPort()), connection, null, context);
      assertThat(response.getCode()).isEqualTo(204);
      assertThat(ConnectedAddressCheck.connected(context)).isTrue();
      connection.close();
      assertThat(new String(received.get(10, TimeUnit.SECONDS), StandardCharsets.US_ASCII))
          .startsWith("GET /ids HTTP/1.1");
    }
  }

  private static DefaultBHttpClientConnection connect(InetAddress address, int port)
      throws IOException {
    Socket socket = new Socket(java.net.Proxy.NO_PROXY);
    socket.connect(new InetSocketAddress(address, port), 5_000);
    DefaultBHttpClientConnection connection = new DefaultBHttpClientConnection(Http1Config.DEFAULT);
    connection.bind(socket);
    return connection;
  }

  private static BasicClassicHttpRequest request(int port) {
    BasicClassicHttpRequest request = new BasicClassicHttpRequest("GET", "/ids");
    request.setAuthority(new URIAuthority("127.0.0.1", port));
    return request;
  }

  /**
   * Accepts one connection and records what arrives until the client closes it; answers a request
   * head with 204.
   */
  private static CompletableFuture<byte[]> record(ServerSocket server) {
    return CompletableFuture.supplyAsync(
        () -> {
          try (Socket socket = server.accept()) {
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            byte[] buffer = new byte[4096];
            for (int n; (n = in.read(buffer)) > 0; ) {
              bytes.write(buffer, 0, n);
              if (bytes.toString(StandardCharsets.US_ASCII).contains("\r\n\r\n")) {
                socket
                    .getOutputStream()
                    .write("HTTP/1.1 204 No Content\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
              }
            }
            return bytes.toByteArray();
          } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        });
  }
}
