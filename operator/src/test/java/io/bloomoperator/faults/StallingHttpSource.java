package io.bloomoperator.faults;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An HTTP key export on 127.0.0.1 that answers {@code HEAD} at once (200, no validator, so every
 * refresh rebuilds) but accepts each {@code GET} and then sends nothing at all, until closed: the
 * origin behind a cache that answers metadata, or a server wedged after accept. The operator sees a
 * connection that stays open with no response, which only its readTimeout ends.
 *
 * <p>Paths under {@value #FIRST_KEY_THEN_STALL} answer 200 and one key first, then nothing: a build
 * that has allocated its filter and holds a build slot while it waits.
 */
final class StallingHttpSource implements AutoCloseable {
  /** Path prefix of sources that send one key and then stall. */
  static final String FIRST_KEY_THEN_STALL = "/first-key-then-stall/";

  private final ExecutorService executor =
      Executors.newCachedThreadPool(
          r -> {
            Thread thread = new Thread(r, "stalling-source");
            thread.setDaemon(true);
            return thread;
          });
  private final CountDownLatch closed = new CountDownLatch(1);
  private final AtomicInteger gets = new AtomicInteger();
  private final AtomicInteger stalledNow = new AtomicInteger();
  private final AtomicInteger firstKeySent = new AtomicInteger();
  private final HttpServer server;

  StallingHttpSource() {
    try {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    server.setExecutor(executor);
    server.createContext("/", this::handle);
    server.start();
  }

  String url(String path) {
    return "http://127.0.0.1:" + server.getAddress().getPort() + path;
  }

  /** Responses under {@value #FIRST_KEY_THEN_STALL} that sent their key so far. */
  int firstKeySent() {
    return firstKeySent.get();
  }

  /** GET requests accepted so far. */
  int gets() {
    return gets.get();
  }

  /**
   * GET requests whose handler still waits (the operator may have given up on some: a handler does
   * not notice the client leaving).
   */
  int stalledNow() {
    return stalledNow.get();
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      if (exchange.getRequestMethod().equals("HEAD")) {
        exchange.sendResponseHeaders(200, -1);
        return;
      }
      gets.incrementAndGet();
      stalledNow.incrementAndGet();
      try {
        if (exchange.getRequestURI().getPath().startsWith(FIRST_KEY_THEN_STALL)) {
          exchange.sendResponseHeaders(200, 0);
          exchange.getResponseBody().write("k1\n".getBytes(StandardCharsets.UTF_8));
          exchange.getResponseBody().flush();
          firstKeySent.incrementAndGet();
        }
        closed.await(30, TimeUnit.MINUTES);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        stalledNow.decrementAndGet();
      }
    }
  }

  @Override
  public void close() {
    closed.countDown();
    server.stop(0);
    executor.shutdownNow();
  }
}
