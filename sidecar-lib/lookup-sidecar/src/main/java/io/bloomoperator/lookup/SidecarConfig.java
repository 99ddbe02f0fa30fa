package io.bloomoperator.lookup;

import io.bloomoperator.watch.BeforeFirstSnapshot;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The sidecar's settings, from command-line flags and environment variables: each flag {@code
 * --some-option} has the variable {@code BLOOM_LOOKUP_SOME_OPTION}, and a flag wins over its
 * variable. The repeatable flags {@code --filter} and {@code --trusted-key-file} have the
 * comma-separated variables {@code BLOOM_LOOKUP_FILTERS} and {@code
 * BLOOM_LOOKUP_TRUSTED_KEY_FILES}. See the module's README for the table.
 *
 * @param filters the filters served, at least one, names unique
 * @param defaultNamespace the namespace of filters given without one; empty: {@code POD_NAMESPACE},
 *     else the Kubernetes client's
 * @param bindAddress where the server listens; a non-loopback address only with {@code
 *     allowNonLoopback}
 * @param port the port, 0 for an ephemeral one
 * @param allowNonLoopback whether the operator of the pod explicitly allowed a non-loopback bind
 * @param failMode what filters without their own fail mode answer before their first snapshot
 * @param trustedKeyFiles PEM Ed25519 public keys; with any, only signed manifests are loaded
 * @param maxManifestAge refuse signed manifests older than this (needs a trusted key)
 * @param maxSnapshotBytes the largest snapshot loaded, empty for sidecar-lib's default
 * @param maxChunks the most chunks a manifest may list, empty for sidecar-lib's default
 * @param localCacheDir where the last verified snapshots are kept across restarts
 * @param memoryMapped serve from memory-mapped files in {@code localCacheDir}
 * @param fileMode share {@code localCacheDir} with the pod's other processes (file mode): files
 *     readable by every user, forced to disk, rewritten at most once per {@code fileInterval}
 * @param fileInterval the least time between two rewrites of a filter's file in file mode
 * @param resync interval of the direct manifest read, empty for sidecar-lib's default
 * @param readerReports whether readers report to the operator (when the pod is known)
 * @param threads the request threads
 * @param queue requests that may wait for a thread; beyond, 503
 * @param requestTimeout the longest a request may take to arrive and to be answered
 * @param maxConnections open connections at most; further ones are not accepted until one closes
 * @param localAddsMaxEntries keys held by local adds at once per filter (0: off), empty for
 *     sidecar-lib's default
 * @param localAddsTtl how long a local add is held if no version shows it, empty for the default
 * @param localAddsMaxKeyLength the longest String key a local add takes, empty for the default
 * @param healthPort the port of a second listener serving only {@code /livez}, {@code /readyz} and
 *     {@code /metrics} (for the kubelet and Prometheus, which cannot reach loopback); empty for
 *     none
 * @param healthBindAddress where that listener binds (any address: it reveals no key)
 * @param objectStores the S3-compatible stores chunks are read from, by the names manifests give
 *     (none: a manifest naming a store is refused, ConfigMap snapshots load as always)
 */
public record SidecarConfig(
    List<FilterSpec> filters,
    Optional<String> defaultNamespace,
    String bindAddress,
    int port,
    boolean allowNonLoopback,
    BeforeFirstSnapshot failMode,
    List<Path> trustedKeyFiles,
    Optional<Duration> maxManifestAge,
    Optional<Long> maxSnapshotBytes,
    Optional<Integer> maxChunks,
    Optional<Path> localCacheDir,
    boolean memoryMapped,
    boolean fileMode,
    Duration fileInterval,
    Optional<Duration> resync,
    boolean readerReports,
    int threads,
    int queue,
    Duration requestTimeout,
    int maxConnections,
    Optional<Integer> localAddsMaxEntries,
    Optional<Duration> localAddsTtl,
    Optional<Integer> localAddsMaxKeyLength,
    Optional<Integer> healthPort,
    String healthBindAddress,
    List<ObjectStoreSpec> objectStores) {

  /** The default port: unassigned by IANA and clear of the usual 8080/8443/9090. */
  public static final int DEFAULT_PORT = 8471;

  /**
   * File mode's default least time between two rewrites of a file: each is the whole payload, and a
   * change stream publishes a delta every second or two.
   */
  public static final Duration DEFAULT_FILE_INTERVAL = Duration.ofSeconds(10);

  /** Loopback only unless {@code --allow-non-loopback}: answers reveal which IDs exist. */
  public static final String DEFAULT_BIND_ADDRESS = "127.0.0.1";

  static final String ENV_PREFIX = "BLOOM_LOOKUP_";

  private static final Set<String> VALUE_FLAGS =
      Set.of(
          "filter",
          "namespace",
          "bind-address",
          "port",
          "fail-mode",
          "trusted-key-file",
          "max-manifest-age",
          "max-snapshot-bytes",
          "max-chunks",
          "local-cache-dir",
          "file-interval",
          "resync",
          "threads",
          "queue",
          "request-timeout",
          "max-connections",
          "local-adds-max-entries",
          "local-adds-ttl",
          "local-adds-max-key-length",
          "health-port",
          "health-bind-address",
          "object-store");

  private static final Set<String> BOOLEAN_FLAGS =
      Set.of("allow-non-loopback", "memory-mapped", "file-mode", "reader-reports");

  private static final Map<String, String> REPEATABLE_ENV =
      Map.of(
          "filter",
          "FILTERS",
          "trusted-key-file",
          "TRUSTED_KEY_FILES",
          "object-store",
          "OBJECT_STORES");

  /**
   * What separates the values of a repeatable flag's variable: a comma, except for object stores,
   * whose specs are themselves comma-separated settings.
   */
  private static final Map<String, String> ENV_SEPARATOR = Map.of("object-store", ";");

  /**
   * Bounds of what the command line and the environment may hold, checked before anything is taken
   * apart: a flag's value is a name, a path, a URL or a number, and a pod has a few filters.
   */
  static final int MAX_ARGS = 1024;

  static final int MAX_VALUE_CHARS = ObjectStoreSpec.MAX_SPEC_CHARS;
  static final int MAX_FILTERS = 64;
  static final int MAX_TRUSTED_KEYS = 16;
  static final int MAX_OBJECT_STORES = 8;
  static final int MAX_LOCAL_ADDS_ENTRIES = 10_000_000;
  static final int MAX_CHUNKS = 1 << 20;

  public SidecarConfig {
    filters = List.copyOf(filters);
    trustedKeyFiles = List.copyOf(trustedKeyFiles);
    objectStores = List.copyOf(objectStores);
  }

  /**
   * Reads the settings from {@code args} and {@code env} (normally {@code System.getenv()}) and
   * checks them, including the bind address rule.
   *
   * @throws IllegalArgumentException with a message for the operator of the pod
   */
  public static SidecarConfig parse(String[] args, Map<String, String> env) {
    if (args.length > MAX_ARGS) {
      throw new IllegalArgumentException("more than " + MAX_ARGS + " arguments");
    }
    for (String arg : args) {
      if (arg.length() > MAX_VALUE_CHARS) {
        // Not quoted: it is long, and may be something that should not be in a log.
        throw new IllegalArgumentException(
            "an argument is longer than " + MAX_VALUE_CHARS + " characters");
      }
    }
    env.forEach(
        (name, value) -> {
          if (name.startsWith(ENV_PREFIX) && value.length() > MAX_VALUE_CHARS * 8) {
            throw new IllegalArgumentException(
                name + " is longer than " + MAX_VALUE_CHARS * 8 + " characters");
          }
        });
    Map<String, List<String>> values = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (!arg.startsWith("--")) {
        throw new IllegalArgumentException("unexpected argument '" + arg + "' (flags are --name)");
      }
      String name = arg.substring(2);
      String value = null;
      int eq = name.indexOf('=');
      if (eq >= 0) {
        value = name.substring(eq + 1);
        name = name.substring(0, eq);
      }
      if (BOOLEAN_FLAGS.contains(name)) {
        // "--flag", "--flag=false" and "--flag false": no positional arguments exist to confuse.
        if (value == null
            && i + 1 < args.length
            && args[i + 1].toLowerCase(Locale.ROOT).matches("true|false")) {
          value = args[++i];
        }
        value = value == null ? "true" : value;
      } else if (VALUE_FLAGS.contains(name)) {
        if (value == null) {
          if (i + 1 >= args.length) {
            throw new IllegalArgumentException("--" + name + " needs a value");
          }
          value = args[++i];
        }
      } else {
        throw new IllegalArgumentException("unknown flag --" + name);
      }
      List<String> list = values.computeIfAbsent(name, n -> new ArrayList<>());
      if (!list.isEmpty() && !REPEATABLE_ENV.containsKey(name)) {
        throw new IllegalArgumentException("--" + name + " given twice");
      }
      list.add(value);
    }
    Settings s = new Settings(values, env);

    List<FilterSpec> filters = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (String spec : s.list("filter", MAX_FILTERS)) {
      FilterSpec filter = FilterSpec.parse(spec);
      if (!names.add(filter.name())) {
        throw new IllegalArgumentException(
            "filter name '"
                + filter.name()
                + "' given twice: it names the path /v1/filters/"
                + filter.name()
                + "/, so it must be unique");
      }
      filters.add(filter);
    }
    if (filters.isEmpty()) {
      throw new IllegalArgumentException(
          "no filter to serve: give --filter [namespace/]name[:String|Long] or "
              + ENV_PREFIX
              + "FILTERS");
    }
    String bind = s.one("bind-address").orElse(DEFAULT_BIND_ADDRESS);
    boolean allowNonLoopback = s.bool("allow-non-loopback", false);
    checkBindAddress(bind, allowNonLoopback);
    int port = s.integer("port", DEFAULT_PORT, 0, 65535);
    List<Path> keys = s.list("trusted-key-file", MAX_TRUSTED_KEYS).stream().map(Path::of).toList();
    Optional<Duration> maxManifestAge =
        s.one("max-manifest-age")
            .map(v -> duration("max-manifest-age", v, Duration.ofSeconds(1), Duration.ofDays(366)));
    List<ObjectStoreSpec> stores = new ArrayList<>();
    Set<String> storeNames = new HashSet<>();
    for (String spec : s.list("object-store", MAX_OBJECT_STORES)) {
      ObjectStoreSpec store = ObjectStoreSpec.parse(spec);
      if (!storeNames.add(store.name())) {
        throw new IllegalArgumentException("object store '" + store.name() + "' given twice");
      }
      stores.add(store);
    }
    if (maxManifestAge.isPresent() && keys.isEmpty()) {
      throw new IllegalArgumentException(
          "--max-manifest-age needs --trusted-key-file: an unsigned createdAt can be set to"
              + " anything");
    }
    Optional<Path> cacheDir = s.one("local-cache-dir").map(Path::of);
    boolean mapped = s.bool("memory-mapped", false);
    if (mapped && cacheDir.isEmpty()) {
      throw new IllegalArgumentException("--memory-mapped needs --local-cache-dir");
    }
    boolean fileMode = s.bool("file-mode", false);
    if (fileMode && cacheDir.isEmpty()) {
      throw new IllegalArgumentException(
          "--file-mode needs --local-cache-dir: the directory (a volume the pod's containers"
              + " share) the files are written to");
    }
    if (fileMode && mapped) {
      throw new IllegalArgumentException(
          "--file-mode with --memory-mapped: a mapped filter's file is rewritten for every"
              + " version; file mode serves from the heap and rewrites the file at most every"
              + " --file-interval");
    }
    Duration fileInterval =
        s.one("file-interval")
            .map(v -> duration("file-interval", v, Duration.ZERO, Duration.ofHours(1)))
            .orElse(DEFAULT_FILE_INTERVAL);
    return new SidecarConfig(
        filters,
        s.one("namespace"),
        bind,
        port,
        allowNonLoopback,
        s.one("fail-mode").map(FilterSpec::parseFailMode).orElse(BeforeFirstSnapshot.FAIL_OPEN),
        keys,
        maxManifestAge,
        s.one("max-snapshot-bytes").map(SidecarConfig::bytes),
        s.one("max-chunks").map(v -> s.integer("max-chunks", 0, 1, MAX_CHUNKS)),
        cacheDir,
        mapped,
        fileMode,
        fileInterval,
        s.one("resync").map(v -> duration("resync", v, Duration.ZERO, Duration.ofDays(1))),
        s.bool("reader-reports", true),
        s.integer("threads", 4, 1, 256),
        s.integer("queue", 64, 0, 10_000),
        s.one("request-timeout")
            .map(
                v -> duration("request-timeout", v, Duration.ofMillis(100), Duration.ofMinutes(10)))
            .orElse(Duration.ofSeconds(10)),
        s.integer("max-connections", 256, 1, 65_536),
        s.one("local-adds-max-entries")
            .map(v -> s.integer("local-adds-max-entries", 0, 0, MAX_LOCAL_ADDS_ENTRIES)),
        s.one("local-adds-ttl")
            .map(v -> duration("local-adds-ttl", v, Duration.ofSeconds(1), Duration.ofDays(1))),
        s.one("local-adds-max-key-length")
            .map(v -> s.integer("local-adds-max-key-length", 0, 1, KeyBatch.MAX_KEY_BYTES)),
        s.one("health-port").map(v -> s.integer("health-port", 0, 0, 65535)),
        s.one("health-bind-address").orElse("0.0.0.0"),
        stores);
  }

  /**
   * Refuses a bind address that is not loopback unless explicitly allowed: the answers tell whoever
   * can reach the port which IDs exist, so reaching it from outside the pod must be a decision, not
   * a default.
   */
  static void checkBindAddress(String bind, boolean allowNonLoopback) {
    InetAddress address;
    try {
      address = InetAddress.getByName(bind);
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("--bind-address '" + bind + "' does not resolve");
    }
    if (!address.isLoopbackAddress() && !allowNonLoopback) {
      throw new IllegalArgumentException(
          "--bind-address "
              + bind
              + " is not a loopback address: answers reveal which IDs exist, so anything that"
              + " can reach this port learns them. Bind to 127.0.0.1 (the default) for the pod's"
              + " own containers, or add --allow-non-loopback (and a NetworkPolicy) if other pods"
              + " must ask");
    }
  }

  /** A duration from {@code min} to {@code max}, or an error naming the flag and the range. */
  static Duration duration(String flag, String value, Duration min, Duration max) {
    Duration d = duration(value);
    if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
      throw new IllegalArgumentException(
          "--" + flag + " must be from " + min + " to " + max + ", got " + value.strip());
    }
    return d;
  }

  private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h)");

  /** {@code 250ms}, {@code 10s}, {@code 5m}, {@code 1h}, or ISO-8601 ({@code PT10S}). */
  static Duration duration(String value) {
    String v = value.strip();
    Matcher m = DURATION.matcher(v);
    try {
      if (m.matches()) {
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
          case "ms" -> Duration.ofMillis(n);
          case "s" -> Duration.ofSeconds(n);
          case "m" -> Duration.ofMinutes(n);
          default -> Duration.ofHours(n);
        };
      }
      return Duration.parse(v);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(
          "'" + value + "' is not a duration (e.g. 250ms, 10s, 5m, 1h or PT10S)");
    }
  }

  private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*(|B|KiB|MiB|GiB|TiB)");

  /** A byte count: plain, or with KiB, MiB, GiB or TiB. */
  static long bytes(String value) {
    Matcher m = SIZE.matcher(value.strip());
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "'" + value + "' is not a size (bytes, or a number with KiB, MiB, GiB or TiB)");
    }
    int shift =
        switch (m.group(2)) {
          case "KiB" -> 10;
          case "MiB" -> 20;
          case "GiB" -> 30;
          case "TiB" -> 40;
          default -> 0;
        };
    try {
      long n = Long.parseLong(m.group(1));
      if (n <= 0 || n > (Long.MAX_VALUE >> shift)) {
        throw new NumberFormatException();
      }
      return n << shift;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("'" + value + "' is not a positive size in range");
    }
  }

  /** Flags first, then {@code BLOOM_LOOKUP_*}. */
  private record Settings(Map<String, List<String>> flags, Map<String, String> env) {

    Optional<String> one(String name) {
      List<String> given = flags.get(name);
      if (given != null) {
        return Optional.of(given.get(0));
      }
      String fromEnv = env.get(envName(name));
      return fromEnv == null || fromEnv.isBlank() ? Optional.empty() : Optional.of(fromEnv);
    }

    List<String> list(String name, int max) {
      List<String> values = flags.get(name);
      if (values == null) {
        String fromEnv = env.get(ENV_PREFIX + REPEATABLE_ENV.get(name));
        values =
            fromEnv == null || fromEnv.isBlank()
                ? List.of()
                : List.of(fromEnv.split(Pattern.quote(ENV_SEPARATOR.getOrDefault(name, ","))))
                    .stream()
                    .map(String::strip)
                    .filter(v -> !v.isEmpty())
                    .toList();
      }
      if (values.size() > max) {
        throw new IllegalArgumentException("--" + name + " given more than " + max + " times");
      }
      return values;
    }

    boolean bool(String name, boolean otherwise) {
      return one(name)
          .map(
              v ->
                  switch (v.strip().toLowerCase(Locale.ROOT)) {
                    case "true" -> true;
                    case "false" -> false;
                    default ->
                        throw new IllegalArgumentException(
                            "--" + name + " must be true or false, got " + v);
                  })
          .orElse(otherwise);
    }

    int integer(String name, int otherwise, int min, int max) {
      Optional<String> value = one(name);
      if (value.isEmpty()) {
        return otherwise;
      }
      try {
        int n = Integer.parseInt(value.get().strip());
        if (n >= min && n <= max) {
          return n;
        }
      } catch (NumberFormatException e) {
        // reported below
      }
      throw new IllegalArgumentException(
          "--" + name + " must be an integer from " + min + " to " + max + ", got " + value.get());
    }

    static String envName(String flag) {
      return ENV_PREFIX + flag.toUpperCase(Locale.ROOT).replace('-', '_');
    }
  }
}
