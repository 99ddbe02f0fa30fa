package io.bloomoperator.source;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/** Keys listed in the resource itself; they follow the same line rules as text sources. */
public final class InlineSource implements KeySource {

  private final List<String> keys;

  public InlineSource(List<String> keys) {
    this.keys = List.copyOf(keys);
  }

  @Override
  public String description() {
    return "inline list of " + keys.size() + " entries";
  }

  @Override
  public String changeToken() {
    // The list is part of the spec, so a change bumps the generation anyway; the digest keeps
    // the token meaningful on its own.
    try {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      for (String key : keys) {
        digest.update(key.getBytes(StandardCharsets.UTF_8));
        digest.update((byte) '\n');
      }
      return "inline:" + HexFormat.of().formatHex(digest.digest()).substring(0, 16);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required by every JDK", e);
    }
  }

  @Override
  public void readKeys(KeySink sink) throws SourceException {
    for (String key : keys) {
      sink.line(key);
    }
  }
}
