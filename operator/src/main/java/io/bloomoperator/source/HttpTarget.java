package io.bloomoperator.source;

import java.net.IDN;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Optional;
import org.apache.hc.core5.http.HttpHost;
import org.apache.hc.core5.net.URIAuthority;

/**
 * Where one request of an http source goes: the URL (the spec's, or a redirect's {@code Location}
 * resolved against the URL that answered), with the host as the client and the egress policy see
 * it: lower case, IPv6 without brackets, international names in ASCII, and also hosts that {@link
 * URI} keeps only as a registry name ({@code 127.2}, names with {@code _}), which the policy must
 * judge rather than the parser drop. The port is the effective one (80 or 443 when the URL has
 * none).
 */
record HttpTarget(URI uri, String scheme, String host, int port) {

  /**
   * The target of an http(s) URL.
   *
   * @throws IllegalArgumentException when it is not an http(s) URL with a host and a valid port
   */
  static HttpTarget of(URI uri) {
    return parsed(uri).orElseThrow(() -> new IllegalArgumentException("not a valid http(s) URL"));
  }

  /**
   * The target a redirect's {@code Location} names, relative to this one; empty when it is not an
   * http(s) URL with a host. Characters a URI may not hold (spaces, non-ASCII) are percent-encoded
   * first, as browsers do.
   */
  Optional<HttpTarget> resolve(String location) {
    URI reference;
    try {
      reference = new URI(encodeIllegal(location));
    } catch (URISyntaxException e) {
      return Optional.empty();
    }
    // URI.resolve drops the slash between an empty base path and a relative reference.
    URI base = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? uri.resolve("/") : uri;
    return parsed(base.resolve(reference));
  }

  boolean https() {
    return scheme.equals("https");
  }

  /** Same scheme, host and port: where a Secret's headers may go. */
  boolean sameOrigin(HttpTarget other) {
    return scheme.equals(other.scheme) && host.equals(other.host) && port == other.port;
  }

  /** The host to connect to. */
  HttpHost httpHost() {
    return new HttpHost(scheme, host, port);
  }

  /**
   * The request's authority, hence its {@code Host} header: without the port when it is the
   * scheme's, byte for byte what the URL's signer (a pre-signed object-store URL) signed.
   */
  URIAuthority authority() {
    return new URIAuthority(host, port == defaultPort(scheme) ? -1 : port);
  }

  /** For DEBUG logs of redirects: without user info, the query string elided. */
  String shown() {
    String shownHost = host.contains(":") ? "[" + host + "]" : host;
    return scheme
        + "://"
        + shownHost
        + ":"
        + port
        + (uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath())
        + (uri.getRawQuery() == null ? "" : "?…");
  }

  private static Optional<HttpTarget> parsed(URI uri) {
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https")) {
      return Optional.empty();
    }
    String host;
    int port;
    if (uri.getHost() != null) {
      host = uri.getHost();
      port = uri.getPort();
    } else {
      // A registry-based authority to java.net.URI, e.g. "127.2:8080": read it as HTTP does.
      try {
        URIAuthority authority =
            uri.getRawAuthority() == null ? null : URIAuthority.create(uri.getRawAuthority());
        if (authority == null) {
          return Optional.empty();
        }
        host = authority.getHostName();
        port = authority.getPort();
      } catch (URISyntaxException e) {
        return Optional.empty();
      }
    }
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    if (!host.chars().allMatch(c -> c < 0x80)) {
      try {
        host = IDN.toASCII(host, IDN.ALLOW_UNASSIGNED);
      } catch (IllegalArgumentException e) {
        return Optional.empty();
      }
    }
    host = host.toLowerCase(Locale.ROOT);
    if (host.isEmpty()) {
      return Optional.empty();
    }
    if (port < 0) {
      port = defaultPort(scheme);
    }
    if (port < 1 || port > 65535) {
      return Optional.empty();
    }
    return Optional.of(new HttpTarget(uri, scheme, host, port));
  }

  private static int defaultPort(String scheme) {
    return scheme.equals("https") ? 443 : 80;
  }

  /** {@code text} with every character a URI may not hold percent-encoded as UTF-8. */
  private static String encodeIllegal(String text) {
    StringBuilder out = new StringBuilder(text.length());
    for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if (c <= 0x20 || c >= 0x7f || "\"<>\\^`{|}".indexOf(c) >= 0) {
        out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)));
        out.append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
      } else {
        out.append((char) c);
      }
    }
    return out.toString();
  }
}
