package io.bloomoperator.source;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;

/**
 * An HTTP source's change token: the response's validator ({@code ETag}, else {@code
 * Last-Modified}) as an opaque digest, so it changes when the value does and quotes nothing the
 * server sent into the status or the manifest.
 */
final class ChangeTokens {

  private ChangeTokens() {}

  /** {@code "etag:<digest>"}, else {@code "last-modified:<digest>"}, else null. */
  static String of(HttpCall response) {
    String etag = Optional.ofNullable(response.header("ETag")).map(String::strip).orElse("");
    if (!etag.isEmpty()) {
      return "etag:" + digest(etag);
    }
    String lastModified =
        Optional.ofNullable(response.header("Last-Modified")).map(String::strip).orElse("");
    if (!lastModified.isEmpty()) {
      return "last-modified:" + digest(lastModified);
    }
    return null;
  }

  /** The first 128 bits of the value's SHA-256, in hex. */
  static String digest(String value) {
    try {
      byte[] hash =
          MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(hash, 0, 16);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is a required JDK algorithm", e);
    }
  }
}
