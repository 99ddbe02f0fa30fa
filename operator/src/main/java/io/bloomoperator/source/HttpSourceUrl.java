package io.bloomoperator.source;

import io.bloomoperator.api.HttpSourceSpec;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * {@code spec.source.http.url}: parsed without quoting the input back (it may hold user info or a
 * signed query string), and shown in messages without either.
 */
final class HttpSourceUrl {

  private HttpSourceUrl() {}

  /**
   * @throws IllegalArgumentException when the text is not an http(s) URL with a host
   */
  static URI parse(String url) {
    return parse(url, "spec.source.http.url");
  }

  /**
   * @param field the spec field holding it, for messages (e.g. {@code spec.source.http.urls[3]})
   * @throws IllegalArgumentException when the text is not an http(s) URL with a host, or too long
   */
  static URI parse(String url, String field) {
    if (url.length() > HttpSourceSpec.MAX_URL_LENGTH) {
      throw new IllegalArgumentException(
          field + " is longer than " + HttpSourceSpec.MAX_URL_LENGTH + " characters");
    }
    URI parsed;
    try {
      parsed = new URI(url);
    } catch (URISyntaxException e) {
      // The exception text repeats the whole input: name only the reason and the position.
      throw new IllegalArgumentException(
          field + " is not a URL: " + e.getReason() + " at index " + e.getIndex());
    }
    String scheme = parsed.getScheme() == null ? "" : parsed.getScheme().toLowerCase(Locale.ROOT);
    if ((!scheme.equals("http") && !scheme.equals("https")) || parsed.getHost() == null) {
      throw new IllegalArgumentException(field + " must be an http:// or https:// URL with a host");
    }
    return parsed;
  }

  /**
   * @throws IllegalArgumentException when the URL cannot be requested
   */
  static HttpTarget target(URI uri) {
    return target(uri, "spec.source.http.url");
  }

  /**
   * @param field the spec field holding it, for messages
   * @throws IllegalArgumentException when the URL cannot be requested
   */
  static HttpTarget target(URI uri, String field) {
    try {
      return HttpTarget.of(uri);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(field + " is not a valid http(s) URL");
    }
  }

  /** The URL without user info and with the query string elided: both may hold credentials. */
  static String shown(URI uri) {
    StringBuilder text = new StringBuilder();
    text.append(uri.getScheme()).append("://").append(uri.getHost());
    if (uri.getPort() >= 0) {
      text.append(':').append(uri.getPort());
    }
    text.append(uri.getRawPath() == null ? "" : uri.getRawPath());
    if (uri.getRawQuery() != null) {
      text.append("?…");
    }
    return text.toString();
  }
}
