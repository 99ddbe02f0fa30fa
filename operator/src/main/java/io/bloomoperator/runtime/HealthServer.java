package io.bloomoperator.runtime;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;

/**
 * The operator's HTTP endpoints for the kubelet and Prometheus:
 *
 * <ul>
 *   <li>{@code /healthz}: liveness, 200 while the operator runs;
 *   <li>{@code /readyz}: 200 once started and every informer is healthy (a replica waiting for the
 *       leader lease counts as ready: it is healthy, just idle);
 *   <li>{@code /metrics}: Prometheus text format.
 * </ul>
 */
public final class HealthServer implements AutoCloseable {

  private final HttpServer server;

  private HealthServer(HttpServer server) {
    this.server = server;
  }

  /** Starts serving on {@code port} (0 picks a free one). */
  public static HealthServer start(
      int port, Operator operator, PrometheusMeterRegistry registry, BooleanSupplier stopped)
      throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress(port), 0);
    server.setExecutor(
        Executors.newFixedThreadPool(
            2,
            r -> {
              Thread t = new Thread(r, "health-http");
              t.setDaemon(true);
              return t;
            }));
    server.createContext(
        "/healthz",
        exchange ->
            respond(
                exchange,
                stopped.getAsBoolean() ? 503 : 200,
                stopped.getAsBoolean() ? "stopped\n" : "ok\n",
                "text/plain"));
    server.createContext(
        "/readyz",
        exchange -> {
          var info = operator.getRuntimeInfo();
          boolean ready = info.isStarted() && info.allEventSourcesAreHealthy();
          respond(
              exchange,
              ready ? 200 : 503,
              ready ? "ok\n" : "not ready: " + info.unhealthyEventSources() + "\n",
              "text/plain");
        });
    server.createContext(
        "/metrics",
        exchange ->
            respond(exchange, 200, registry.scrape(), "text/plain; version=0.0.4; charset=utf-8"));
    server.start();
    return new HealthServer(server);
  }

  /** The port actually bound. */
  public int port() {
    return server.getAddress().getPort();
  }

  private static void respond(HttpExchange exchange, int status, String body, String type)
      throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", type);
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
