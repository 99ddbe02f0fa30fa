package io.bloomoperator.publish;

import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.fabric8.kubernetes.api.model.ConfigMap;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * The manifest ConfigMap as the operator last read it: the parsed manifest (null while no version
 * was ever published) and the bookkeeping annotations on it, named in {@link SnapshotConfigMaps}.
 *
 * @param configMap the manifest ConfigMap; its resourceVersion is the precondition of the next
 *     update
 * @param manifest the published version, or null
 */
public record PublishedSnapshot(ConfigMap configMap, Manifest manifest) {

  /** The published version, if any. */
  public OptionalLong version() {
    return manifest == null ? OptionalLong.empty() : OptionalLong.of(manifest.version());
  }

  /**
   * The versions whose chunks the previous manifest named and this one does not (kept for the grace
   * period), as recorded; also reads the single version operators before delta chains recorded.
   * Unparsable entries are skipped.
   */
  public List<Long> previousVersions() {
    String list = annotation(SnapshotConfigMaps.ANNOTATION_PREVIOUS_VERSIONS);
    if (list == null) {
      list = annotation(SnapshotConfigMaps.ANNOTATION_PREVIOUS_VERSION);
    }
    List<Long> versions = new ArrayList<>();
    if (list != null) {
      for (String item : list.split(",", 1001)) {
        try {
          versions.add(Long.valueOf(item.trim()));
        } catch (NumberFormatException e) {
          // hand-edited: the worst outcome is an early cleanup
        }
      }
    }
    return versions;
  }

  /** When the published version was written (the manifest's createdAt), or null. */
  public Instant publishedAt() {
    if (manifest == null) {
      return null;
    }
    try {
      return java.time.OffsetDateTime.parse(manifest.createdAt()).toInstant();
    } catch (java.time.format.DateTimeParseException e) {
      return null; // validated when parsed; unreachable in practice
    }
  }

  /** When the previous version was superseded, if recorded. */
  public Instant supersededAt() {
    return instantAnnotation(SnapshotConfigMaps.ANNOTATION_SUPERSEDED_AT);
  }

  /** The source token recorded with the version, or null. */
  public String sourceToken() {
    return annotation(SnapshotConfigMaps.ANNOTATION_SOURCE_TOKEN);
  }

  /** The spec generation recorded with the version, or -1. */
  public long specGeneration() {
    Long value = longAnnotation(SnapshotConfigMaps.ANNOTATION_SPEC_GENERATION);
    return value == null ? -1 : value;
  }

  /** When the version was last built or confirmed by a rebuild, or null. */
  public Instant builtAt() {
    return instantAnnotation(SnapshotConfigMaps.ANNOTATION_BUILT_AT);
  }

  // Bookkeeping annotations edited by hand into something unparsable count as absent: the
  // worst outcome is a rebuild or an early cleanup, never a resource stuck in errors.
  private Long longAnnotation(String key) {
    String value = annotation(key);
    try {
      return value == null ? null : Long.valueOf(value.trim());
    } catch (NumberFormatException e) {
      return null;
    }
  }

  private Instant instantAnnotation(String key) {
    String value = annotation(key);
    try {
      return value == null ? null : Instant.parse(value.trim());
    } catch (java.time.format.DateTimeParseException e) {
      return null;
    }
  }

  private String annotation(String key) {
    var annotations = configMap.getMetadata().getAnnotations();
    return annotations == null ? null : annotations.get(key);
  }
}
