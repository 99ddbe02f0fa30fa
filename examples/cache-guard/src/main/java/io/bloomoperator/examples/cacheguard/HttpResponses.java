package io.bloomoperator.examples.cacheguard;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/** Writes complete responses on a JDK {@link HttpExchange}. */
final class HttpResponses {

  static final String JSON = "application/json";
  static final String TEXT = "text/plain; charset=utf-8";

  private HttpResponses() {}

  /** Sends {@code status} with {@code body} and closes the exchange. */
  static void send(HttpExchange exchange, int status, String contentType, String body)
      throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", contentType);
    // HEAD gets the headers only; -1 tells the JDK server there is no body.
    boolean head = "HEAD".equals(exchange.getRequestMethod());
    exchange.sendResponseHeaders(status, head ? -1 : bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      if (!head) {
        out.write(bytes);
      }
    }
  }

  /** Answers 405 unless the request is a GET or HEAD; returns whether it was one. */
  static boolean allowGetOnly(HttpExchange exchange) throws IOException {
    String method = exchange.getRequestMethod();
    if ("GET".equals(method) || "HEAD".equals(method)) {
      return true;
    }
    exchange.getResponseHeaders().set("Allow", "GET, HEAD");
    send(exchange, 405, TEXT, "method not allowed\n");
    return false;
  }
}
