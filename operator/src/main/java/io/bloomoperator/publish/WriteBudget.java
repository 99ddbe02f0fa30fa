package io.bloomoperator.publish;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongConsumer;

/**
 * Bytes written to etcd per namespace and per filter over the last hour, so that no tenant can fill
 * etcd's database with history: every version it writes stays in etcd until the API server compacts
 * it, and deleted chunks count as much as live ones until then. The namespace budget ({@code
 * BLOOM_MAX_NAMESPACE_BYTES}) bounds what is stored at one moment; this bounds what is written over
 * time, which a filter whose every publish is a whole new snapshot (a geometry that changes at each
 * spec edit) would otherwise make unbounded.
 *
 * <p>Counted: the chunks and the manifest of every new version, each object with {@link
 * Limits#OBJECT_OVERHEAD_BYTES} for its metadata and etcd's key, charged before they are written (a
 * publish that fails half-way has written too). Kept per key in one-minute buckets over a sliding
 * hour: fixed memory per namespace and filter, dropped once a key's hour is empty. Held in memory:
 * a restarted operator starts with empty windows, which costs at most one more hour's budget and
 * needs a restart only the administrator can cause.
 */
public final class WriteBudget {

  private static final int BUCKETS = 60;
  private static final Duration WINDOW = Duration.ofHours(1);
  private static final long BUCKET_SECONDS = WINDOW.toSeconds() / BUCKETS;

  /**
   * The operator's write limits.
   *
   * @param namespaceBytesPerHour bytes all filters of one namespace may write in any hour
   * @param filterBytesPerHour bytes one filter may write in any hour
   * @param maxChunksPerVersion most chunk objects one version is cut into; a smaller requested
   *     chunk size is raised (see {@link #chunkSize})
   */
  public record Limits(
      long namespaceBytesPerHour, long filterBytesPerHour, int maxChunksPerVersion) {

    /**
     * What one object costs etcd beyond its data: metadata (labels, annotations, ownerReference,
     * managedFields) and its key, about 1.5 KiB for a chunk ConfigMap, rounded up.
     */
    public static final long OBJECT_OVERHEAD_BYTES = 2048;

    public static final long DEFAULT_NAMESPACE_BYTES_PER_HOUR = 512L * 1024 * 1024;
    public static final long DEFAULT_FILTER_BYTES_PER_HOUR = 256L * 1024 * 1024;
    public static final int DEFAULT_MAX_CHUNKS_PER_VERSION = 256;

    public Limits {
      if (namespaceBytesPerHour < 1 || filterBytesPerHour < 1 || maxChunksPerVersion < 1) {
        throw new IllegalArgumentException("write limits must be positive");
      }
    }

    /** The defaults: 512 MiB per namespace and 256 MiB per filter an hour, 256 chunks a version. */
    public static Limits defaults() {
      return new Limits(
          DEFAULT_NAMESPACE_BYTES_PER_HOUR,
          DEFAULT_FILTER_BYTES_PER_HOUR,
          DEFAULT_MAX_CHUNKS_PER_VERSION);
    }

    /** What writing {@code dataBytes} in {@code objects} objects costs against the budgets. */
    public static long cost(long dataBytes, long objects) {
      return dataBytes + objects * OBJECT_OVERHEAD_BYTES;
    }
  }

  /** Why a write was refused and when it would fit. */
  public record Refusal(String scope, long limit, long used, Instant fitsAt) {}

  private final Limits limits;
  private final LongConsumer charged;
  private final Map<String, Window> windows = new HashMap<>();

  public WriteBudget(Limits limits) {
    this(limits, bytes -> {});
  }

  /** A budget that tells {@code charged} every amount it charges (for a metric). */
  public WriteBudget(Limits limits, LongConsumer charged) {
    this.limits = limits;
    this.charged = charged;
  }

  /** The limits this budget enforces. */
  public Limits limits() {
    return limits;
  }

  /**
   * The chunk size a version of {@code payloadBytes} is cut into: the requested size, raised so
   * that the version has at most {@link Limits#maxChunksPerVersion} chunks (a tiny chunk size must
   * not multiply etcd objects), and never above {@code maxChunkBytes}.
   */
  public int chunkSize(int requested, long payloadBytes, int maxChunkBytes) {
    long least = (payloadBytes + limits.maxChunksPerVersion() - 1) / limits.maxChunksPerVersion();
    return (int) Math.min(maxChunkBytes, Math.max(requested, least));
  }

  /**
   * Charges {@code bytes} to the namespace and the filter if both have room in the last hour.
   *
   * @return empty when charged; otherwise the budget that has no room, and nothing is charged
   */
  public synchronized Optional<Refusal> charge(
      String namespace, String filter, long bytes, Instant now) {
    Window ns = windows.computeIfAbsent(namespaceKey(namespace), k -> new Window());
    Window own = windows.computeIfAbsent(filterKey(namespace, filter), k -> new Window());
    Optional<Refusal> refused =
        refusal("namespace " + namespace, ns, limits.namespaceBytesPerHour(), bytes, now)
            .or(() -> refusal("filter", own, limits.filterBytesPerHour(), bytes, now));
    if (refused.isEmpty()) {
      ns.add(bytes, now);
      own.add(bytes, now);
      charged.accept(bytes);
    }
    prune(now);
    return refused;
  }

  /**
   * When the namespace and the filter have room again for a write of any size, or empty when they
   * have room now: a build is not started while its publish could not be written anyway.
   */
  public synchronized Optional<Refusal> exhausted(String namespace, String filter, Instant now) {
    Window ns = windows.get(namespaceKey(namespace));
    Window own = windows.get(filterKey(namespace, filter));
    Optional<Refusal> full =
        ns == null
            ? Optional.empty()
            : refusal("namespace " + namespace, ns, limits.namespaceBytesPerHour(), 1, now);
    return full.or(
        () ->
            own == null
                ? Optional.empty()
                : refusal("filter", own, limits.filterBytesPerHour(), 1, now));
  }

  /**
   * Whether {@code bytes} would fit the namespace's and the filter's budgets now, charging nothing:
   * for a caller that charges this budget only if another one has room too.
   *
   * @return empty when it fits; otherwise the budget that has no room
   */
  public synchronized Optional<Refusal> fits(
      String namespace, String filter, long bytes, Instant now) {
    Window ns = windows.getOrDefault(namespaceKey(namespace), new Window());
    Window own = windows.getOrDefault(filterKey(namespace, filter), new Window());
    return refusal("namespace " + namespace, ns, limits.namespaceBytesPerHour(), bytes, now)
        .or(() -> refusal("filter", own, limits.filterBytesPerHour(), bytes, now));
  }

  /**
   * Charges {@code bytes} that were written whatever the budget said (a status that reports an
   * outcome), even beyond the limits: what comes later and can wait finds that much less room.
   */
  public synchronized void record(String namespace, String filter, long bytes, Instant now) {
    windows.computeIfAbsent(namespaceKey(namespace), k -> new Window()).add(bytes, now);
    windows.computeIfAbsent(filterKey(namespace, filter), k -> new Window()).add(bytes, now);
    charged.accept(bytes);
    prune(now);
  }

  /** Bytes charged to the namespace in the last hour. */
  public synchronized long writtenByNamespace(String namespace, Instant now) {
    Window w = windows.get(namespaceKey(namespace));
    return w == null ? 0 : w.total(now);
  }

  private static Optional<Refusal> refusal(
      String scope, Window window, long limit, long bytes, Instant now) {
    long used = window.total(now);
    if (used + bytes <= limit) {
      return Optional.empty();
    }
    // A write larger than the whole budget never fits; it is refused until the limit is raised.
    Instant fitsAt = bytes > limit ? null : window.fitsAt(limit - bytes, now);
    return Optional.of(new Refusal(scope, limit, used, fitsAt));
  }

  private void prune(Instant now) {
    windows.values().removeIf(w -> w.total(now) == 0);
  }

  private static String namespaceKey(String namespace) {
    return namespace;
  }

  private static String filterKey(String namespace, String filter) {
    // '/' never occurs in a namespace or object name.
    return namespace + "/" + filter;
  }

  /** Bytes per minute over the last hour. */
  private static final class Window {
    private final long[] bytes = new long[BUCKETS];
    private final long[] minute = new long[BUCKETS];

    void add(long amount, Instant now) {
      long m = minuteOf(now);
      int i = (int) Math.floorMod(m, (long) BUCKETS);
      if (minute[i] != m) {
        minute[i] = m;
        bytes[i] = 0;
      }
      bytes[i] += amount;
    }

    long total(Instant now) {
      long m = minuteOf(now);
      long sum = 0;
      for (int i = 0; i < BUCKETS; i++) {
        if (m - minute[i] < BUCKETS && bytes[i] > 0) {
          sum += bytes[i];
        }
      }
      return sum;
    }

    /** The first time the bytes still inside the window are at most {@code allowed}. */
    Instant fitsAt(long allowed, Instant now) {
      long m = minuteOf(now);
      long total = total(now);
      // Buckets leave the window oldest first, one a minute.
      for (long oldest = m - BUCKETS + 1; oldest <= m; oldest++) {
        if (total <= allowed) {
          return oldest == m - BUCKETS + 1
              ? now
              : Instant.ofEpochSecond((oldest + BUCKETS - 1) * BUCKET_SECONDS);
        }
        int i = (int) Math.floorMod(oldest, (long) BUCKETS);
        if (minute[i] == oldest) {
          total -= bytes[i];
        }
      }
      return Instant.ofEpochSecond((m + BUCKETS) * BUCKET_SECONDS);
    }

    private static long minuteOf(Instant now) {
      return Math.floorDiv(now.getEpochSecond(), BUCKET_SECONDS);
    }
  }
}
