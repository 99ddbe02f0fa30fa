package io.bloomoperator.examples.cacheguard;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.util.function.BooleanSupplier;

/** A Kubernetes probe endpoint: 200 {@code ok} while the condition holds, 503 otherwise. */
final class ProbeHandler implements HttpHandler {

  private final BooleanSupplier healthy;
  private final String whyNot;

  /**
   * @param healthy evaluated on every probe
   * @param whyNot the 503 body, saying what is missing
   */
  ProbeHandler(BooleanSupplier healthy, String whyNot) {
    this.healthy = healthy;
    this.whyNot = whyNot;
  }

  @Override
  public void handle(HttpExchange exchange) throws IOException {
    if (!HttpResponses.allowGetOnly(exchange)) {
      return;
    }
    if (healthy.getAsBoolean()) {
      HttpResponses.send(exchange, 200, HttpResponses.TEXT, "ok\n");
    } else {
      HttpResponses.send(exchange, 503, HttpResponses.TEXT, whyNot + "\n");
    }
  }
}
