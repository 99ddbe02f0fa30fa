package io.bloomoperator.source;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.zip.GZIPOutputStream;

/**
 * The JDK's HTTP server on a loopback address (127.0.0.1 unless told otherwise) and a free port,
 * recording the requests it serves.
 */
final class HttpTestServer implements AutoCloseable {

  /** What a request looked like. */
  record Request(String method, String path, Map<String, List<String>> headers) {
    String header(String name) {
      return headers.entrySet().stream()
          .filter(e -> e.getKey().equalsIgnoreCase(name))
          .map(e -> e.getValue().get(0))
          .findFirst()
          .orElse(null);
    }
  }

  private final HttpServer server;
  private final ExecutorService executor =
      Executors.newCachedThreadPool(
          r -> {
            Thread thread = new Thread(r, "http-test-server");
            thread.setDaemon(true);
            return thread;
          });
  final List<Request> requests = new CopyOnWriteArrayList<>();

  HttpTestServer() {
    this(InetAddress.getLoopbackAddress());
  }

  /** A server on another loopback address, e.g. 127.0.0.2 or ::1. */
  HttpTestServer(InetAddress loopback) {
    if (!loopback.isLoopbackAddress()) {
      throw new IllegalArgumentException("test servers listen on loopback only");
    }
    try {
      server = HttpServer.create(new InetSocketAddress(loopback, 0), 0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    server.setExecutor(executor);
    server.start();
  }

  /** Serves {@code path} (and below) with {@code handler}, recording each request first. */
  HttpTestServer on(String path, HttpHandler handler) {
    server.createContext(
        path,
        exchange -> {
          requests.add(
              new Request(
                  exchange.getRequestMethod(),
                  exchange.getRequestURI().getPath(),
                  Map.copyOf(exchange.getRequestHeaders())));
          try {
            handler.handle(exchange);
          } finally {
            exchange.close();
          }
        });
    return this;
  }

  String url(String path) {
    InetAddress address = server.getAddress().getAddress();
    String host = address.getHostAddress();
    return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port() + path;
  }

  int port() {
    return server.getAddress().getPort();
  }

  long count(String method, String path) {
    return requests.stream()
        .filter(r -> r.method().equals(method) && r.path().equals(path))
        .count();
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }

  /** Sends {@code body} with status 200 (headers only for HEAD). */
  static void send(HttpExchange exchange, int status, byte[] body) throws IOException {
    if (exchange.getRequestMethod().equals("HEAD")) {
      exchange.sendResponseHeaders(status, -1);
      return;
    }
    exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(body);
    }
  }

  static byte[] text(List<String> lines) {
    return (String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8);
  }

  static byte[] gzip(byte[] plain) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (GZIPOutputStream out = new GZIPOutputStream(bytes)) {
      out.write(plain);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }
}
