package io.bloomoperator.source;

import io.bloomoperator.api.Reasons;
import io.fabric8.kubernetes.api.model.Secret;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The request headers an HTTP source sends from its {@code headersSecret}: every data key of the
 * Secret becomes a header of that name. The Secret is read at most once per instance (once per
 * reconcile), and only if the Secret allows the host of every URL of the source (all of a list's,
 * checked before anything is sent to any); values never appear in messages. Safe for the reading
 * threads of a URL list.
 */
final class SecretHeaders {

  /** Headers that belong to the connection or the framing, not to the application. */
  private static final Set<String> RESTRICTED =
      Set.of(
          "host",
          "connection",
          "content-length",
          "transfer-encoding",
          "te",
          "trailer",
          "upgrade",
          "expect",
          "keep-alive",
          "proxy-connection");

  private final SecretAccess secrets;
  private final String secretName;
  private final List<HttpTarget> origins;
  private Map<String, String> headers;

  /**
   * @param secretName the Secret's name, or null when the source sends no headers
   * @param origins the URLs the headers are for; only their hosts and ports are asked of the Secret
   */
  SecretHeaders(SecretAccess secrets, String secretName, List<HttpTarget> origins) {
    this.secrets = secrets;
    this.secretName = secretName;
    this.origins = List.copyOf(origins);
  }

  /** The Secret's name, or null. */
  String secretName() {
    return secretName;
  }

  /** Sets every header of the Secret on {@code call}. */
  void applyTo(HttpCall call) throws SourceException {
    for (Map.Entry<String, String> header : read().entrySet()) {
      set(call, header.getKey(), header.getValue());
    }
  }

  private void set(HttpCall call, String name, String value) throws SourceException {
    String problem = null;
    if (RESTRICTED.contains(name.toLowerCase(Locale.ROOT))) {
      problem = "it describes the connection, which the operator controls";
    } else {
      try {
        call.header(name, value);
      } catch (IllegalArgumentException e) {
        // The message may quote the value; only the name is shown.
        problem = "it is not a valid HTTP header";
      }
    }
    if (problem != null) {
      throw new SourceException(
          Reasons.SOURCE_UNREADABLE,
          "header \""
              + name
              + "\" from Secret "
              + secretName
              + " (headersSecret) cannot be sent: "
              + problem);
    }
  }

  /**
   * Reads the Secret now if not yet done, so a Secret that does not allow every URL's host is
   * refused before any request.
   */
  void check() throws SourceException {
    read();
  }

  private synchronized Map<String, String> read() throws SourceException {
    if (headers != null) {
      return headers;
    }
    if (secretName == null) {
      return headers = Map.of();
    }
    Secret secret =
        secrets.forSending(
            secretName,
            "source.http.headersSecret",
            origins.stream()
                .map(o -> new SecretAccess.Destination(o.host(), o.port()))
                .distinct()
                .toList());
    Map<String, String> read = new LinkedHashMap<>();
    if (secret.getData() != null) {
      secret
          .getData()
          .forEach(
              (name, value) ->
                  read.put(
                      name,
                      new String(Base64.getDecoder().decode(value), StandardCharsets.UTF_8)
                          .strip()));
    }
    if (secret.getStringData() != null) {
      secret.getStringData().forEach((name, value) -> read.put(name, value.strip()));
    }
    return headers = Map.copyOf(read);
  }
}
