package io.bloomoperator.snapshot;

import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Where a chunk lives in an object store, shared by the operator (writer) and readers so the two
 * cannot drift apart.
 *
 * <p>A chunk that a manifest names {@code <chunk name>} with digest {@code <sha256>} is the object
 * {@code <store prefix>/<namespace>/<filter>/<chunk name>.<sha256>}. The filter's directory keeps
 * namespaces and filters apart (a reader of one filter never builds a key outside it, and the
 * operator lists and deletes one filter's objects by that prefix). The digest in the key makes
 * every object immutable and content-addressed: a write is never an overwrite, and a leftover of a
 * deleted filter of the same name, or of a publish that crashed, can never be taken for a chunk of
 * another content.
 *
 * <p>The store prefix, endpoint and bucket come from whoever resolves the store's name (the
 * operator from its store definition, a reader from its own configuration), never from a manifest.
 */
public final class StoreObjectKeys {

  /** A store name: a DNS label, like the names of the resources that define stores. */
  private static final Pattern STORE_NAME = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");

  /**
   * A chunk name as {@link SnapshotNames} makes them: lower-case letters, digits, '-' and '.', no
   * '/' and no "..", so it stays one path segment inside the filter's directory.
   */
  private static final Pattern CHUNK_NAME = Pattern.compile("[a-z0-9]([-.a-z0-9]*[a-z0-9])?");

  /** A store prefix: path segments of the chunk-name alphabet plus '_', without empty segments. */
  private static final Pattern STORE_PREFIX =
      Pattern.compile("([a-zA-Z0-9_][-._a-zA-Z0-9]*)(/[a-zA-Z0-9_][-._a-zA-Z0-9]*)*");

  private static final int SHA256_HEX = 64;

  private StoreObjectKeys() {}

  /** A chunk's name and digest, as read back from its object key. */
  public record ChunkKey(String chunkName, String sha256) {}

  /** Whether {@code name} may name a store (a DNS label of at most 63 characters). */
  public static boolean isStoreName(String name) {
    return name != null && STORE_NAME.matcher(name).matches();
  }

  /** Whether {@code prefix} may prefix a store's keys: empty, or '/'-separated plain segments. */
  public static boolean isStorePrefix(String prefix) {
    return prefix != null
        && (prefix.isEmpty() || (STORE_PREFIX.matcher(prefix).matches() && !prefix.contains("..")));
  }

  /**
   * The directory of one filter's objects, ending in '/': {@code <prefix>/<namespace>/<filter>/}
   * ({@code <namespace>/<filter>/} with an empty prefix).
   *
   * @throws IllegalArgumentException if the prefix, namespace or filter name could leave it
   */
  public static String filterDirectory(String storePrefix, String namespace, String filterName) {
    if (!isStorePrefix(storePrefix)) {
      throw new IllegalArgumentException("not a store prefix: '" + storePrefix + "'");
    }
    requireSegment("namespace", namespace);
    requireSegment("filter name", filterName);
    return (storePrefix.isEmpty() ? "" : storePrefix + "/") + namespace + "/" + filterName + "/";
  }

  /**
   * The key of the chunk {@code ref} of filter {@code filterName} in {@code namespace}.
   *
   * @throws IllegalArgumentException if the chunk name is not one segment of the chunk-name
   *     alphabet or the digest is not 64 hex digits: a manifest naming such a chunk is refused
   */
  public static String key(
      String storePrefix, String namespace, String filterName, Manifest.ChunkRef ref) {
    return key(filterDirectory(storePrefix, namespace, filterName), ref.name(), ref.sha256());
  }

  /** The key of chunk {@code chunkName} with digest {@code sha256} in {@code directory}. */
  public static String key(String directory, String chunkName, String sha256) {
    requireSegment("chunk name", chunkName);
    if (!Sha256.isHex64(sha256)) {
      throw new IllegalArgumentException("chunk digest is not 64 hex digits");
    }
    return directory + chunkName + "." + sha256.toLowerCase(Locale.ROOT);
  }

  /**
   * The chunk name and digest of {@code key}, if it is a chunk object directly in {@code
   * directory}; empty for anything else (another filter's objects, foreign files).
   */
  public static Optional<ChunkKey> parse(String directory, String key) {
    if (key == null || !key.startsWith(directory)) {
      return Optional.empty();
    }
    String rest = key.substring(directory.length());
    int dot = rest.length() - SHA256_HEX - 1;
    if (dot < 1 || rest.charAt(dot) != '.') {
      return Optional.empty();
    }
    String name = rest.substring(0, dot);
    String sha256 = rest.substring(dot + 1);
    if (!isSegment(name)
        || !Sha256.isHex64(sha256)
        || !sha256.equals(sha256.toLowerCase(Locale.ROOT))) {
      return Optional.empty();
    }
    return Optional.of(new ChunkKey(name, sha256));
  }

  private static void requireSegment(String what, String segment) {
    if (!isSegment(segment)) {
      throw new IllegalArgumentException(what + " is not a plain path segment");
    }
  }

  private static boolean isSegment(String segment) {
    return segment != null
        && segment.length() <= SnapshotNames.MAX_NAME_LENGTH
        && !segment.contains("..")
        && CHUNK_NAME.matcher(segment).matches();
  }
}
