package io.bloomoperator.publish;

import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.StoreObjectKeys;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * The published state: the manifest ConfigMap as the operator last read or wrote it, the parsed
 * manifest (null while no version was ever published) and the bookkeeping annotations on it (build
 * record, retained versions), named in {@link SnapshotConfigMaps}. The only code that reads those
 * annotations or derives the next ones; never changed in place, every change is a copy.
 *
 * @param configMap the manifest ConfigMap; its resourceVersion is the precondition of the next
 *     update
 * @param manifest the published version, or null
 */
public record PublishedSnapshot(ConfigMap configMap, Manifest manifest) {

  /**
   * Annotation: the object stores (comma-separated) that hold chunks of versions this manifest no
   * longer names, because the filter moved away from them; their objects go with the grace period
   * of the retained versions, since no manifest will name those stores again.
   */
  public static final String ANNOTATION_FORMER_STORES = "bloomoperator.io/former-stores";

  /** At most this many former stores are remembered. */
  static final int MAX_FORMER_STORES = 16;

  /**
   * The longest record the operator writes: {@link #MAX_FORMER_STORES} store names (DNS labels of
   * at most 63 characters) and their commas. A longer one is not the operator's and is ignored
   * whole, before it is split.
   */
  static final int MAX_FORMER_STORES_CHARS = MAX_FORMER_STORES * 64;

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

  /**
   * The object stores the filter's chunks were in before the published version's (what {@link
   * #ANNOTATION_FORMER_STORES} records), without the published one: at most {@link
   * #MAX_FORMER_STORES} names that may name a store, from a record of at most {@link
   * #MAX_FORMER_STORES_CHARS} characters (anything else is not what the operator wrote, and
   * ignored). Unlike the manifest, whoever may edit the ConfigMap may have written this: callers
   * act on a name only once the BloomStore it names allows the filter's namespace.
   */
  public List<String> formerStores() {
    String list = annotation(ANNOTATION_FORMER_STORES);
    List<String> stores = new ArrayList<>();
    if (list == null || list.length() > MAX_FORMER_STORES_CHARS) {
      return stores;
    }
    for (String item : list.split(",", MAX_FORMER_STORES + 1)) {
      String name = item.trim();
      if (StoreObjectKeys.isStoreName(name)
          && stores.size() < MAX_FORMER_STORES
          && !stores.contains(name)
          && !name.equals(manifest == null ? null : manifest.store())) {
        stores.add(name);
      }
    }
    return stores;
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

  /**
   * The replication slot the operator created for the filter's stream, as the build record names it
   * ({@link BuildRecord#ANNOTATION_STREAM_SLOT}), or null. Trusted as far as the build record is
   * ({@link OwnManifests}); compared, never parsed.
   */
  public String streamSlot() {
    return annotation(BuildRecord.ANNOTATION_STREAM_SLOT);
  }

  /**
   * The change-stream position recorded with the version (its text form), or null. Trusted as far
   * as the build record is ({@link OwnManifests}); the text is parsed with bounds by its user.
   */
  public String streamPosition() {
    return annotation(SnapshotConfigMaps.ANNOTATION_STREAM_POSITION);
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

  /** The resourceVersion the next write of this ConfigMap is guarded by. */
  public String resourceVersion() {
    return configMap.getMetadata().getResourceVersion();
  }

  /** When the grace period of the retained versions ends; empty when none are retained. */
  public java.util.Optional<Instant> retainedUntil(java.time.Duration retainPrevious) {
    if (manifest == null || previousVersions().isEmpty()) {
      return java.util.Optional.empty();
    }
    Instant at = supersededAt();
    return java.util.Optional.of(at == null ? Instant.MIN : at.plus(retainPrevious));
  }

  /**
   * The bookkeeping annotations of the manifest that replaces {@code current} (null: none) with
   * {@code next}: {@code build}'s record, and {@code superseded}, the versions {@code next} no
   * longer names ({@link PublishPlan#superseded}, decided by the plan), retained from {@code at} on
   * (the grace period starts when readers can first see the new version); when it drops none, the
   * versions an earlier replacement retained keep their grace period.
   */
  static Map<String, String> annotationsFor(
      PublishedSnapshot current,
      io.bloomoperator.snapshot.Manifest next,
      BuildRecord build,
      List<Long> superseded,
      Instant at) {
    Map<String, String> annotations = new HashMap<>();
    build.annotate(annotations);
    if (current != null && current.manifest() != null) {
      // A slot outlives versions: kept until a record names another (what OwnManifests trusts).
      if (build.streamSlot() == null && current.streamSlot() != null) {
        annotations.put(BuildRecord.ANNOTATION_STREAM_SLOT, current.streamSlot());
      }
      List<Long> dropped = superseded;
      List<Long> previous = current.previousVersions();
      if (!dropped.isEmpty()) {
        SnapshotConfigMaps.putSuperseded(annotations, dropped, at);
      } else if (!previous.isEmpty() && current.supersededAt() != null) {
        SnapshotConfigMaps.putSuperseded(annotations, previous, current.supersededAt());
      }
      java.util.Set<String> former = new java.util.LinkedHashSet<>();
      if (current.manifest().store() != null) {
        former.add(current.manifest().store());
      }
      former.addAll(current.formerStores());
      former.remove(next.store());
      if (!former.isEmpty()) {
        annotations.put(
            ANNOTATION_FORMER_STORES,
            String.join(",", former.stream().limit(MAX_FORMER_STORES).toList()));
      }
    }
    return annotations;
  }

  /** A copy of the manifest ConfigMap with {@code build} recorded: a rebuild confirmed it. */
  ConfigMap confirmedBy(BuildRecord build) {
    return withAnnotations(build::annotate);
  }

  /** A copy of the manifest ConfigMap that retains no previous version: their grace is over. */
  ConfigMap forgettingPrevious() {
    return withAnnotations(
        a -> {
          SnapshotConfigMaps.removeSuperseded(a);
          a.remove(ANNOTATION_FORMER_STORES);
        });
  }

  /** This state without its build record: one the operator did not write is not decided by. */
  PublishedSnapshot withoutBuildRecord() {
    return new PublishedSnapshot(
        withAnnotations(
            a -> {
              a.remove(SnapshotConfigMaps.ANNOTATION_SOURCE_TOKEN);
              a.remove(SnapshotConfigMaps.ANNOTATION_SPEC_GENERATION);
              a.remove(SnapshotConfigMaps.ANNOTATION_BUILT_AT);
              a.remove(SnapshotConfigMaps.ANNOTATION_STREAM_POSITION);
              a.remove(BuildRecord.ANNOTATION_STREAM_SLOT);
            }),
        manifest);
  }

  /** This state's ConfigMap without its manifest: "no version of ours published". */
  PublishedSnapshot withoutManifest() {
    return new PublishedSnapshot(configMap, null);
  }

  private ConfigMap withAnnotations(java.util.function.Consumer<Map<String, String>> change) {
    ConfigMap copy = Serialization.clone(configMap);
    Map<String, String> annotations =
        copy.getMetadata().getAnnotations() == null
            ? new HashMap<>()
            : new HashMap<>(copy.getMetadata().getAnnotations());
    change.accept(annotations);
    copy.getMetadata().setAnnotations(annotations);
    return copy;
  }
}
