package io.bloomoperator.examples.cacheguard;

import com.sun.net.httpserver.HttpServer;
import io.bloomoperator.watch.LiveBloomFilter;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The HTTP side: {@code /products/{id}}, {@code /stats}, {@code /healthz}, {@code /readyz} on the
 * JDK's built-in server, with a fixed pool of worker threads (the look-ups block on Redis and the
 * database, so the pool bounds how many run at once).
 */
public final class CacheGuardServer implements AutoCloseable {

  static {
    // The JDK server writes a response's headers and body separately; with Nagle's algorithm on
    // (its default) each keep-alive response then waits out the client's delayed ACK, about 40 ms.
    // Read once, when the first HttpServer of the JVM starts; an explicit -D setting wins.
    if (System.getProperty("sun.net.httpserver.nodelay") == null) {
      System.setProperty("sun.net.httpserver.nodelay", "true");
    }
  }

  private final HttpServer server;
  private final ExecutorService workers;

  private CacheGuardServer(HttpServer server, ExecutorService workers) {
    this.server = server;
    this.workers = workers;
  }

  /**
   * Binds {@code port} (0 picks a free one) on all interfaces and starts serving.
   *
   * @param threads worker threads, i.e. look-ups in flight at once
   */
  public static CacheGuardServer start(
      int port, int threads, ProductLookup lookup, GuardStats stats, LiveBloomFilter<Long> filter)
      throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress(port), 0);
    server.createContext(ProductHandler.PATH, new ProductHandler(lookup));
    server.createContext("/stats", new StatsHandler(stats, filter));
    server.createContext("/healthz", new ProbeHandler(() -> true, "unhealthy"));
    // Not ready before the first snapshot: the filter would let every ID through until then.
    server.createContext(
        "/readyz", new ProbeHandler(filter::isReady, "product filter not loaded yet"));
    ExecutorService workers =
        Executors.newFixedThreadPool(
            threads,
            runnable -> {
              Thread thread = new Thread(runnable, "cache-guard-http");
              thread.setDaemon(true);
              return thread;
            });
    server.setExecutor(workers);
    server.start();
    return new CacheGuardServer(server, workers);
  }

  /** The port actually bound. */
  public int port() {
    return server.getAddress().getPort();
  }

  /** Stops accepting, gives requests in flight a second to finish, then stops the workers. */
  @Override
  public void close() {
    server.stop(1);
    workers.shutdown();
    try {
      workers.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
