package io.bloomoperator.lookup;

import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.watch.BeforeFirstSnapshot;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * One filter the sidecar serves, as given on the command line or in {@code BLOOM_LOOKUP_FILTERS}:
 * {@code [namespace/]name[:String|Long][:fail-open|fail-closed]}. It is served under {@code
 * /v1/filters/<name>/...}; without a namespace the pod's own is used.
 *
 * @param namespace the BloomFilter's namespace, empty for the pod's own
 * @param name the BloomFilter's name, also the name in the request path
 * @param keyType the filter's key type (default String)
 * @param failMode what is answered before the first snapshot, empty for the sidecar's default
 */
public record FilterSpec(
    Optional<String> namespace,
    String name,
    KeyType keyType,
    Optional<BeforeFirstSnapshot> failMode) {

  public FilterSpec {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(keyType, "keyType");
    Objects.requireNonNull(failMode, "failMode");
  }

  /**
   * Parses {@code [namespace/]name[:String|Long][:fail-open|fail-closed]}; the key type and the
   * fail mode may come in either order, names are checked by sidecar-lib when the filter starts.
   *
   * @throws IllegalArgumentException naming what is wrong
   */
  public static FilterSpec parse(String spec) {
    String[] parts = spec.strip().split(":", -1);
    String qualified = parts[0];
    if (qualified.isEmpty()) {
      throw new IllegalArgumentException("filter '" + spec + "': no name");
    }
    Optional<String> namespace = Optional.empty();
    String name = qualified;
    int slash = qualified.indexOf('/');
    if (slash >= 0) {
      namespace = Optional.of(qualified.substring(0, slash));
      name = qualified.substring(slash + 1);
      if (namespace.get().isEmpty() || name.isEmpty() || name.contains("/")) {
        throw new IllegalArgumentException(
            "filter '"
                + spec
                + "': expected [namespace/]name[:String|Long][:fail-open|fail-closed]");
      }
    }
    KeyType keyType = null;
    BeforeFirstSnapshot failMode = null;
    for (int i = 1; i < parts.length; i++) {
      String option = parts[i].strip().toLowerCase(Locale.ROOT);
      switch (option) {
        case "string", "long" -> {
          if (keyType != null) {
            throw new IllegalArgumentException("filter '" + spec + "': key type given twice");
          }
          keyType = option.equals("long") ? KeyType.LONG : KeyType.STRING;
        }
        case "fail-open", "fail-closed" -> {
          if (failMode != null) {
            throw new IllegalArgumentException("filter '" + spec + "': fail mode given twice");
          }
          failMode = parseFailMode(option);
        }
        default ->
            throw new IllegalArgumentException(
                "filter '"
                    + spec
                    + "': unknown option '"
                    + parts[i]
                    + "' (String, Long, fail-open or fail-closed)");
      }
    }
    return new FilterSpec(
        namespace, name, keyType == null ? KeyType.STRING : keyType, Optional.ofNullable(failMode));
  }

  /** {@code fail-open} or {@code fail-closed}, any case. */
  static BeforeFirstSnapshot parseFailMode(String value) {
    return switch (value.strip().toLowerCase(Locale.ROOT)) {
      case "fail-open" -> BeforeFirstSnapshot.FAIL_OPEN;
      case "fail-closed" -> BeforeFirstSnapshot.FAIL_CLOSED;
      default ->
          throw new IllegalArgumentException(
              "fail mode must be fail-open or fail-closed, got '" + value + "'");
    };
  }
}
