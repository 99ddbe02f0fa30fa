package io.bloomoperator.lookup;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.watch.BeforeFirstSnapshot;
import io.bloomoperator.watch.LiveBloomFilter;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP API over a set of {@link LiveBloomFilter}s (see the module's README for the contract).
 *
 * <p><b>Bounded work.</b> Requests run on a fixed pool of {@code threads} with a queue of {@code
 * queue}; a request arriving when both are full is handed to one overflow thread that answers 503
 * without reading its body (and when that is busy too, the connection is closed). A slow client
 * holds at most one thread, and for at most the request timeout: the JDK server closes a connection
 * whose request has not arrived, or whose answer has not been sent, within it ({@code
 * sun.net.httpserver.maxReqTime}/{@code maxRspTime}, set by {@link #configureJdkServer}). Bodies
 * are read through the bounds of {@link KeyBatch}, request headers are bounded by the JDK server
 * ({@code sun.net.httpserver.maxReqHeaderSize}, 380 KiB by default).
 */
final class LookupServer implements AutoCloseable {

  /** Marks an answer given before the filter's first snapshot, under fail-open. */
  static final String ANSWER_HEADER = "Bloom-Answer";

  static final String FAIL_OPEN = "fail-open";

  private static final Logger LOG = LoggerFactory.getLogger(LookupServer.class);
  private static final String PREFIX = "/v1/filters/";
  private static final String CONTAINS = "/contains";
  private static final String ADD = "/add";
  private static final String JSON = "application/json";
  private static final ThreadLocal<Boolean> OVERFLOW = ThreadLocal.withInitial(() -> false);

  private final boolean answersKeys;
  private final Map<String, LiveBloomFilter<?>> filters;
  private final PrometheusMeterRegistry registry;
  private final HttpServer server;
  private final ThreadPoolExecutor workers;
  private final ThreadPoolExecutor overflow;
  private final Counter overloaded;
  private final Timer lookups;

  /**
   * Sets the JDK server's per-request time bounds and connection cap. They are read once per JVM,
   * when the first {@link HttpServer} is created, so a value already set (on the command line) is
   * kept.
   */
  static void configureJdkServer(Duration requestTimeout, int maxConnections) {
    String seconds = Long.toString(Math.max(1, requestTimeout.toSeconds()));
    System.getProperties().putIfAbsent("sun.net.httpserver.maxReqTime", seconds);
    System.getProperties().putIfAbsent("sun.net.httpserver.maxRspTime", seconds);
    System.getProperties()
        .putIfAbsent("sun.net.httpserver.maxConnections", Integer.toString(maxConnections));
    // Small answers on keep-alive connections: do not wait for Nagle's delayed ACK.
    System.getProperties().putIfAbsent("sun.net.httpserver.nodelay", "true");
  }

  LookupServer(
      InetSocketAddress address,
      Map<String, LiveBloomFilter<?>> filters,
      PrometheusMeterRegistry registry,
      int threads,
      int queue)
      throws IOException {
    this(address, filters, registry, threads, queue, true);
  }

  /**
   * @param answersKeys false for the health listener: {@code /livez}, {@code /readyz} and {@code
   *     /metrics} only, which reveal no key, so it may listen where the kubelet and Prometheus
   *     reach it; every other path is 404 there
   */
  LookupServer(
      InetSocketAddress address,
      Map<String, LiveBloomFilter<?>> filters,
      PrometheusMeterRegistry registry,
      int threads,
      int queue,
      boolean answersKeys)
      throws IOException {
    this.answersKeys = answersKeys;
    this.filters = Map.copyOf(filters);
    this.registry = registry;
    this.overloaded =
        Counter.builder("bloomlookup.overloaded")
            .description(
                "Requests answered 503 because every request thread and queue slot was taken")
            .register(registry);
    this.lookups =
        Timer.builder("bloomlookup.requests")
            .description("Membership requests answered (single and batch)")
            .register(registry);
    this.workers =
        new ThreadPoolExecutor(
            threads,
            threads,
            0,
            TimeUnit.MILLISECONDS,
            queue == 0
                ? new java.util.concurrent.SynchronousQueue<>()
                : new ArrayBlockingQueue<>(queue),
            threads("bloom-lookup-"));
    this.overflow =
        new ThreadPoolExecutor(
            1,
            1,
            0,
            TimeUnit.MILLISECONDS,
            new ArrayBlockingQueue<>(16),
            threads("bloom-overflow-"));
    Executor executor =
        task -> {
          try {
            workers.execute(task);
          } catch (RejectedExecutionException full) {
            overflow.execute( // throws when full too: the JDK server then closes the connection
                () -> {
                  OVERFLOW.set(true);
                  try {
                    task.run();
                  } finally {
                    OVERFLOW.set(false);
                  }
                });
          }
        };
    this.server = HttpServer.create(address, 128);
    server.setExecutor(executor);
    server.createContext("/", this::handle);
  }

  void start() {
    server.start();
  }

  /** The address bound, with the real port when 0 was asked for. */
  InetSocketAddress address() {
    return server.getAddress();
  }

  private static ThreadFactory threads(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return task -> {
      Thread thread = new Thread(task, prefix + n.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      if (OVERFLOW.get()) {
        overloaded.increment();
        exchange.getResponseHeaders().set("Retry-After", "1");
        exchange.getResponseHeaders().set("Connection", "close");
        sendError(exchange, 503, "overloaded: every request thread and queue slot is taken");
        return;
      }
      try {
        route(exchange);
      } catch (LookupException e) {
        if (e.status() == 413) {
          // The rest of the body is not read: do not reuse the connection.
          exchange.getResponseHeaders().set("Connection", "close");
        }
        sendError(exchange, e.status(), e.getMessage());
        if (e.status() == 413) {
          linger(exchange.getRequestBody());
        }
      } catch (IOException e) {
        LOG.debug("request failed: {}", e.toString());
      } catch (RuntimeException e) {
        LOG.warn("request failed", e);
        sendError(exchange, 500, "internal error");
      }
    } catch (IOException e) {
      LOG.debug("answer not sent: {}", e.toString());
    }
  }

  /** Discarded after a 413 at most: four times the body bound. */
  static final int LINGER_BYTES = 4 * KeyBatch.MAX_BODY_BYTES;

  /**
   * Reads and discards a bounded part of a refused body after the 413 went out. Closing a socket
   * whose peer is still sending makes the kernel answer with a reset, which can destroy the 413
   * before the client read it; a client that is still sending gets this much time to read it
   * (bounded in bytes here, and in time by the request timeout), then the connection is closed.
   */
  private static void linger(InputStream body) {
    byte[] discard = new byte[64 * 1024];
    try {
      for (long read = 0; read < LINGER_BYTES; ) {
        int n = body.read(discard, 0, (int) Math.min(discard.length, LINGER_BYTES - read));
        if (n < 0) {
          return;
        }
        read += n;
      }
    } catch (IOException e) {
      // the client went away: nothing left to protect
    }
  }

  private void route(HttpExchange exchange) throws IOException {
    String path = exchange.getRequestURI().getRawPath();
    String method = exchange.getRequestMethod();
    switch (path) {
      case "/livez" -> {
        requireMethod(exchange, "GET");
        send(exchange, 200, "text/plain; charset=utf-8", "ok\n");
      }
      case "/readyz" -> {
        requireMethod(exchange, "GET");
        readiness(exchange);
      }
      case "/metrics" -> {
        requireMethod(exchange, "GET");
        send(exchange, 200, "text/plain; version=0.0.4; charset=utf-8", registry.scrape());
      }
      default -> {
        if (!answersKeys) {
          throw new LookupException(404, "this listener serves /livez, /readyz and /metrics only");
        }
        if (path.equals("/v1/filters")) {
          requireMethod(exchange, "GET");
          list(exchange);
          return;
        }
        if (path.startsWith(PREFIX) && path.endsWith(ADD)) {
          LiveBloomFilter<?> filter = filter(path, ADD);
          requireMethod(exchange, "POST");
          add(exchange, filter, batch(exchange, filter));
          return;
        }
        if (!path.startsWith(PREFIX) || !path.endsWith(CONTAINS)) {
          throw new LookupException(404, "no such path");
        }
        LiveBloomFilter<?> filter = filter(path, CONTAINS);
        long start = System.nanoTime();
        if (method.equals("GET")) {
          contains(exchange, filter, single(exchange, filter), false);
        } else if (method.equals("POST")) {
          contains(exchange, filter, batch(exchange, filter), true);
        } else {
          exchange.getResponseHeaders().set("Allow", "GET, POST");
          throw new LookupException(405, "GET or POST");
        }
        lookups.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
      }
    }
  }

  private LiveBloomFilter<?> filter(String path, String suffix) {
    String name = path.substring(PREFIX.length(), path.length() - suffix.length());
    LiveBloomFilter<?> filter = filters.get(name);
    if (filter == null) {
      // The name is not repeated: an answer carries nothing of the request but its result.
      throw new LookupException(404, "no such filter is served here (GET /v1/filters lists them)");
    }
    return filter;
  }

  /**
   * Local adds ({@link LiveBloomFilter#addLocal}): the keys are answered "maybe present" at once by
   * this sidecar, until a published version holds them or their TTL passes. All keys are checked
   * before any is added; beyond the overlay's bound they are refused and counted, never evicting.
   */
  @SuppressWarnings("unchecked") // the key type was checked against the filter's when parsing
  private static void add(HttpExchange exchange, LiveBloomFilter<?> filter, KeyBatch keys)
      throws IOException {
    int accepted;
    try {
      if (filter.keyType().keyType() == KeyType.LONG) {
        List<Long> longs = new java.util.ArrayList<>(keys.size());
        for (long key : keys.longs()) {
          longs.add(key);
        }
        accepted = ((LiveBloomFilter<Long>) filter).addLocal(longs);
      } else {
        accepted = ((LiveBloomFilter<String>) filter).addLocal(List.of(keys.strings()));
      }
    } catch (IllegalArgumentException e) {
      throw LookupException.badRequest(e.getMessage()); // a key over the local-add key length
    }
    send(
        exchange,
        200,
        JSON,
        "{\"accepted\":" + accepted + ",\"refused\":" + (keys.size() - accepted) + "}");
  }

  private static void requireMethod(HttpExchange exchange, String method) {
    if (!exchange.getRequestMethod().equals(method)) {
      exchange.getResponseHeaders().set("Allow", method);
      throw new LookupException(405, method + " only");
    }
  }

  private static KeyBatch single(HttpExchange exchange, LiveBloomFilter<?> filter) {
    String query = exchange.getRequestURI().getRawQuery();
    String key = null;
    if (query != null) {
      for (String parameter : query.split("&", -1)) {
        if (parameter.startsWith("key=")) {
          if (key != null) {
            throw LookupException.badRequest("one key per GET; POST a batch for more");
          }
          key = KeyBatch.decodeQueryValue(parameter.substring(4));
        }
      }
    }
    if (key == null) {
      throw LookupException.badRequest("the query parameter 'key' is missing");
    }
    return KeyBatch.single(key, filter.keyType().keyType());
  }

  private static KeyBatch batch(HttpExchange exchange, LiveBloomFilter<?> filter)
      throws IOException {
    String length = exchange.getRequestHeaders().getFirst("Content-Length");
    if (length != null) {
      try {
        if (Long.parseLong(length.strip()) > KeyBatch.MAX_BODY_BYTES) {
          throw LookupException.tooLarge(
              "a batch body is at most " + KeyBatch.MAX_BODY_BYTES + " bytes");
        }
      } catch (NumberFormatException e) {
        throw LookupException.badRequest("Content-Length is not a number");
      }
    }
    String type = exchange.getRequestHeaders().getFirst("Content-Type");
    String mediaType = type == null ? "" : type.split(";", 2)[0].strip().toLowerCase(Locale.ROOT);
    KeyType keyType = filter.keyType().keyType();
    InputStream body = exchange.getRequestBody();
    return switch (mediaType) {
      case "text/plain" -> KeyBatch.fromLines(body, keyType);
      case JSON -> KeyBatch.fromJson(body, keyType);
      default ->
          throw new LookupException(
              415, "a batch is text/plain (one key a line) or application/json (an array)");
    };
  }

  /**
   * Answers the keys from one served version and names it. The version is read before and after the
   * lookup; should a swap fall in between, the lookup is repeated, so the version given is the one
   * that answered (a swap takes far longer than a batch, so one repeat is the most ever seen).
   */
  private void contains(
      HttpExchange exchange, LiveBloomFilter<?> filter, KeyBatch keys, boolean batch)
      throws IOException {
    boolean[] present = new boolean[keys.size()];
    long version;
    for (int attempt = 0; ; attempt++) {
      version = filter.currentVersion();
      if (version == LiveBloomFilter.NO_VERSION
          && filter.beforeFirstSnapshot() == BeforeFirstSnapshot.FAIL_CLOSED) {
        exchange.getResponseHeaders().set("Retry-After", "1");
        throw new LookupException(
            503, "filter '" + filter.filterName() + "' has not loaded its first snapshot yet");
      }
      lookUp(filter, keys, present);
      if (filter.currentVersion() == version || attempt == 3) {
        break;
      }
    }
    if (version == LiveBloomFilter.NO_VERSION) {
      exchange.getResponseHeaders().set(ANSWER_HEADER, FAIL_OPEN);
    }
    StringBuilder json = new StringBuilder(32 + present.length * 6);
    if (batch) {
      json.append("{\"version\":").append(version).append(",\"present\":[");
      for (int i = 0; i < present.length; i++) {
        json.append(i == 0 ? "" : ",").append(present[i]);
      }
      json.append("]}");
    } else {
      json.append("{\"present\":").append(present[0]).append(",\"version\":").append(version);
      json.append('}');
    }
    send(exchange, 200, JSON, json.toString());
  }

  @SuppressWarnings("unchecked") // the key type was checked against the filter's when parsing
  private static void lookUp(LiveBloomFilter<?> filter, KeyBatch keys, boolean[] present) {
    if (filter.keyType().keyType() == KeyType.LONG) {
      filter.mightContainAllLongs(keys.longs(), 0, keys.size(), present);
    } else {
      String[] strings = keys.strings();
      ((LiveBloomFilter<String>) filter).mightContainAll(strings, 0, strings.length, present);
    }
  }

  private void readiness(HttpExchange exchange) throws IOException {
    List<String> waiting =
        filters.values().stream()
            .filter(filter -> !filter.isReady())
            .map(LiveBloomFilter::filterName)
            .sorted()
            .toList();
    if (waiting.isEmpty()) {
      send(exchange, 200, "text/plain; charset=utf-8", "ready\n");
    } else {
      send(
          exchange,
          503,
          "text/plain; charset=utf-8",
          "not loaded yet: " + String.join(", ", waiting) + "\n");
    }
  }

  private void list(HttpExchange exchange) throws IOException {
    Map<String, LiveBloomFilter<?>> sorted = new LinkedHashMap<>();
    filters.keySet().stream().sorted().forEach(name -> sorted.put(name, filters.get(name)));
    StringBuilder json = new StringBuilder("{\"filters\":[");
    boolean first = true;
    for (LiveBloomFilter<?> filter : sorted.values()) {
      json.append(first ? "" : ",")
          .append("{\"name\":")
          .append(quote(filter.filterName()))
          .append(",\"namespace\":")
          .append(quote(filter.namespace()))
          .append(",\"keyType\":")
          .append(quote(filter.keyType().keyType().crdName()))
          .append(",\"failMode\":")
          .append(
              quote(
                  filter.beforeFirstSnapshot() == BeforeFirstSnapshot.FAIL_OPEN
                      ? FAIL_OPEN
                      : "fail-closed"))
          .append(",\"ready\":")
          .append(filter.isReady())
          .append(",\"version\":")
          .append(filter.currentVersion())
          .append('}');
      first = false;
    }
    send(exchange, 200, JSON, json.append("]}").toString());
  }

  private static String quote(String value) {
    return '"' + new String(JsonStringEncoder.getInstance().quoteAsString(value)) + '"';
  }

  private static void sendError(HttpExchange exchange, int status, String message)
      throws IOException {
    send(exchange, status, JSON, "{\"error\":" + quote(message) + "}");
  }

  private static void send(HttpExchange exchange, int status, String type, String body)
      throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", type);
    exchange.getResponseHeaders().set("Cache-Control", "no-store");
    exchange.sendResponseHeaders(status, bytes.length);
    exchange.getResponseBody().write(bytes);
    // Out now: closing the exchange first drains what is left of the request and may close the
    // connection before a buffered answer was written.
    exchange.getResponseBody().flush();
  }

  @Override
  public void close() {
    server.stop(0);
    workers.shutdownNow();
    overflow.shutdownNow();
  }
}
