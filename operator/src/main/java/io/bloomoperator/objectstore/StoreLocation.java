package io.bloomoperator.objectstore;

import io.bloomoperator.api.BloomStoreSpec;
import java.net.URI;
import java.util.Locale;

/**
 * Where a {@link io.bloomoperator.api.BloomStore} keeps its objects: the server (endpoint host,
 * port and path), the bucket and the key prefix, normalised so that two definitions of one place
 * compare equal whatever their names, the endpoint's scheme or letter case. Names are only labels:
 * two stores at one location hold the same objects, so the clean-up compares locations, never names
 * (a "former" store at the current location is the current store).
 *
 * <p>Two locations overlap when they are equal or one prefix holds the other (same server and
 * bucket): objects of one may then be listed, and so cleaned, through the other.
 *
 * @param server the endpoint's host (lower case, without a trailing dot), port (the scheme's
 *     default when absent) and path (without trailing '/'); the raw text when it does not parse
 * @param bucket the bucket
 * @param prefix the key prefix, without leading or trailing '/' (empty: the bucket's root)
 */
public record StoreLocation(String server, String bucket, String prefix) {

  /** The location {@code spec} defines (its prefix defaulted). */
  public static StoreLocation of(BloomStoreSpec spec) {
    return new StoreLocation(
        server(spec.getEndpoint()),
        spec.getBucket() == null ? "" : spec.getBucket(),
        prefix(spec.prefixOrDefault()));
  }

  /** Whether this and {@code other} are the same location or one is nested in the other. */
  public boolean overlaps(StoreLocation other) {
    return server.equals(other.server)
        && bucket.equals(other.bucket)
        && (holds(prefix, other.prefix) || holds(other.prefix, prefix));
  }

  /** Whether keys under {@code outer} include every key under {@code inner}. */
  private static boolean holds(String outer, String inner) {
    return outer.isEmpty() || inner.equals(outer) || inner.startsWith(outer + "/");
  }

  private static String server(String endpoint) {
    if (endpoint == null) {
      return "";
    }
    try {
      URI uri = URI.create(endpoint.strip());
      String host = uri.getHost();
      if (host == null) {
        return endpoint.strip();
      }
      host = host.toLowerCase(Locale.ROOT);
      if (host.endsWith(".")) {
        host = host.substring(0, host.length() - 1);
      }
      int port = uri.getPort();
      if (port < 0) {
        port = "http".equalsIgnoreCase(uri.getScheme()) ? 80 : 443;
      }
      String path = uri.getPath() == null ? "" : uri.getPath().replaceAll("/+$", "");
      return host + ":" + port + path;
    } catch (IllegalArgumentException e) {
      return endpoint.strip();
    }
  }

  private static String prefix(String prefix) {
    return prefix.replaceAll("/+", "/").replaceAll("^/|/$", "");
  }
}
