package io.bloomoperator.lookup;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * One S3-compatible object store the sidecar reads snapshot chunks from, as given with {@code
 * --object-store} or in {@code BLOOM_LOOKUP_OBJECT_STORES}: the store's name (the one manifests
 * name, the operator's BloomStore) followed by {@code key=value} settings, comma-separated, e.g.
 * {@code
 * primary,endpoint=https://s3.eu-west-1.amazonaws.com,bucket=bloom-snapshots,region=eu-west-1}. The
 * settings are those of sidecar-lib's {@code S3ObjectStore.Builder}, one for one.
 *
 * <p>Credentials are never a value here: a command line and a pod spec are read by many (ps, {@code
 * kubectl get pod -o yaml}). Either two files (the keys of a Secret mounted as a volume: {@code
 * access-key-id-file}, {@code secret-access-key-file}, read at each request so a rotated Secret is
 * used without a restart), or, without them, the AWS SDK's default chain ({@code
 * AWS_ACCESS_KEY_ID}/{@code AWS_SECRET_ACCESS_KEY} from a {@code secretKeyRef}, a profile file, an
 * instance profile). Every message about a spec names settings and paths, never a file's content.
 *
 * @param name the store's name, a DNS label (sidecar-lib checks it)
 * @param endpoint an {@code http} or {@code https} URL
 * @param bucket the bucket
 * @param prefix the key prefix of the store, empty for sidecar-lib's default ({@code bloom})
 * @param region the signing region, empty for sidecar-lib's default ({@code us-east-1})
 * @param pathStyle path-style addressing (default true) or virtual-host style
 * @param accessKeyIdFile with {@code secretAccessKeyFile}: the access key pair's files; both empty:
 *     the SDK's default chain
 * @param secretAccessKeyFile the secret access key's file
 * @param caFile a PEM CA bundle that verifies the store's certificate instead of the JVM's CAs
 * @param connectTimeout empty for sidecar-lib's default (5 s)
 * @param readTimeout empty for sidecar-lib's default (30 s)
 * @param parallelism chunks fetched at once, empty for sidecar-lib's default (4)
 * @param attempts attempts without progress per chunk, empty for sidecar-lib's default (4)
 */
public record ObjectStoreSpec(
    String name,
    URI endpoint,
    String bucket,
    Optional<String> prefix,
    Optional<String> region,
    boolean pathStyle,
    Optional<Path> accessKeyIdFile,
    Optional<Path> secretAccessKeyFile,
    Optional<Path> caFile,
    Optional<Duration> connectTimeout,
    Optional<Duration> readTimeout,
    Optional<Integer> parallelism,
    Optional<Integer> attempts) {

  /** A spec is a few URLs and paths; far more is a mistake, refused before it is taken apart. */
  static final int MAX_SPEC_CHARS = 8192;

  /** An endpoint URL, bounded as paths are. */
  static final int MAX_VALUE_CHARS = 4096;

  /** The longest timeout accepted: a chunk is at most 1 MiB. */
  static final Duration MAX_TIMEOUT = Duration.ofMinutes(10);

  private static final Set<String> KEYS =
      Set.of(
          "endpoint",
          "bucket",
          "prefix",
          "region",
          "path-style",
          "access-key-id-file",
          "secret-access-key-file",
          "ca-file",
          "connect-timeout",
          "read-timeout",
          "parallelism",
          "attempts");

  /**
   * Parses {@code name,key=value,...}; sidecar-lib's builder checks the values again when the store
   * is built (bucket and prefix syntax, parallelism and attempts ranges).
   *
   * @throws IllegalArgumentException naming the setting that is wrong (never a credential: there
   *     are none in a spec)
   */
  public static ObjectStoreSpec parse(String spec) {
    if (spec.length() > MAX_SPEC_CHARS) {
      throw new IllegalArgumentException(
          "object store spec longer than " + MAX_SPEC_CHARS + " characters");
    }
    String[] parts = spec.strip().split(",", -1);
    String name = parts[0].strip();
    if (name.isEmpty() || name.contains("=")) {
      throw new IllegalArgumentException(
          "object store spec must start with the store's name: name,endpoint=URL,bucket=NAME,...");
    }
    Map<String, String> values = new LinkedHashMap<>();
    for (int i = 1; i < parts.length; i++) {
      String part = parts[i].strip();
      int eq = part.indexOf('=');
      String key = eq < 0 ? part : part.substring(0, eq).strip().toLowerCase(Locale.ROOT);
      if (eq < 0 || !KEYS.contains(key)) {
        // A part without '=' is not repeated: it may be a secret pasted as a bare value, and this
        // message goes to the pod's log.
        throw new IllegalArgumentException(
            "object store '"
                + name
                + "': "
                + (eq < 0 ? "setting " + i + " is not key=value" : "unknown setting '" + key + "'")
                + " (one of "
                + String.join(", ", KEYS.stream().sorted().toList())
                + "; credentials only as files)");
      }
      String value = part.substring(eq + 1).strip();
      if (value.isEmpty() || value.length() > MAX_VALUE_CHARS) {
        throw new IllegalArgumentException(
            "object store '"
                + name
                + "': "
                + key
                + " must have a value of 1 to "
                + MAX_VALUE_CHARS
                + " characters");
      }
      if (values.putIfAbsent(key, value) != null) {
        throw new IllegalArgumentException("object store '" + name + "': " + key + " given twice");
      }
    }
    String endpoint = required(values, name, "endpoint");
    URI uri;
    try {
      uri = new URI(endpoint);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("object store '" + name + "': endpoint is not a URL");
    }
    if (uri.getUserInfo() != null) {
      // A URL with user:password would put a credential where everyone reads the pod spec.
      throw new IllegalArgumentException(
          "object store '" + name + "': endpoint must not carry user information");
    }
    Optional<Path> idFile = Optional.ofNullable(values.get("access-key-id-file")).map(Path::of);
    Optional<Path> secretFile =
        Optional.ofNullable(values.get("secret-access-key-file")).map(Path::of);
    if (idFile.isPresent() != secretFile.isPresent()) {
      throw new IllegalArgumentException(
          "object store '"
              + name
              + "': give both access-key-id-file and secret-access-key-file, or neither (the"
              + " SDK's default credential chain)");
    }
    return new ObjectStoreSpec(
        name,
        uri,
        required(values, name, "bucket"),
        Optional.ofNullable(values.get("prefix")),
        Optional.ofNullable(values.get("region")),
        bool(values.getOrDefault("path-style", "true"), name),
        idFile,
        secretFile,
        Optional.ofNullable(values.get("ca-file")).map(Path::of),
        timeout(values.get("connect-timeout"), name, "connect-timeout"),
        timeout(values.get("read-timeout"), name, "read-timeout"),
        count(values.get("parallelism"), name, "parallelism", 64),
        count(values.get("attempts"), name, "attempts", 100));
  }

  private static String required(Map<String, String> values, String name, String key) {
    String value = values.get(key);
    if (value == null) {
      throw new IllegalArgumentException("object store '" + name + "': " + key + " is required");
    }
    return value;
  }

  private static boolean bool(String value, String name) {
    return switch (value.toLowerCase(Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default ->
          throw new IllegalArgumentException(
              "object store '" + name + "': path-style must be true or false");
    };
  }

  private static Optional<Duration> timeout(String value, String name, String key) {
    if (value == null) {
      return Optional.empty();
    }
    Duration d = SidecarConfig.duration(value);
    if (d.isZero() || d.isNegative() || d.compareTo(MAX_TIMEOUT) > 0) {
      throw new IllegalArgumentException(
          "object store '" + name + "': " + key + " must be above 0 and at most 10m");
    }
    return Optional.of(d);
  }

  private static Optional<Integer> count(String value, String name, String key, int max) {
    if (value == null) {
      return Optional.empty();
    }
    try {
      int n = Integer.parseInt(value);
      if (n >= 1 && n <= max) {
        return Optional.of(n);
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(
        "object store '" + name + "': " + key + " must be an integer from 1 to " + max);
  }
}
