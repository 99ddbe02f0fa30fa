package io.bloomoperator.publish;

import io.bloomoperator.snapshot.SnapshotConfigMaps;
import java.time.Instant;
import java.util.Map;

/**
 * What a build was made from. Kept on the manifest ConfigMap, not only in the status, so that a
 * reconcile caused by the operator's own manifest write (or a lost status) is recognised as up to
 * date instead of rebuilding.
 *
 * @param streamSlot the PostgreSQL replication slot the operator created for the filter's stream
 *     ({@code <system identifier>/<database>/<slot>}), or null: none, or keep the one the replaced
 *     version records. Recorded here, under the build-record digest, and not only in {@code
 *     status.stream.slot}: whoever may patch the status must not be able to make the operator read
 *     or drop a slot it did not create ({@link #ANNOTATION_STREAM_SLOT}).
 */
public record BuildRecord(
    String sourceToken,
    long specGeneration,
    Instant builtAt,
    String streamPosition,
    String streamSlot) {

  /**
   * Annotation: the replication slot the operator created for the filter's stream. Kept by every
   * publish that follows (a slot outlives versions), covered by the build-record digest, so it is
   * believed only as far as the build record is ({@link OwnManifests}).
   */
  public static final String ANNOTATION_STREAM_SLOT = "bloomoperator.io/stream-slot";

  /** A build of a filter without a change stream. */
  public BuildRecord(String sourceToken, long specGeneration, Instant builtAt) {
    this(sourceToken, specGeneration, builtAt, null, null);
  }

  /** A build whose stream stands at {@code streamPosition}, keeping the recorded slot. */
  public BuildRecord(
      String sourceToken, long specGeneration, Instant builtAt, String streamPosition) {
    this(sourceToken, specGeneration, builtAt, streamPosition, null);
  }

  /** This record naming {@code slot} (null: keep what the replaced version records). */
  public BuildRecord inSlot(String slot) {
    return new BuildRecord(sourceToken, specGeneration, builtAt, streamPosition, slot);
  }

  /**
   * This record with the change stream at {@code position} (its text form, null: none): a stream
   * publish keeps the full build's token, generation and time, so the next full build is due when
   * it was.
   */
  public BuildRecord at(String position) {
    return new BuildRecord(sourceToken, specGeneration, builtAt, position, streamSlot);
  }

  void annotate(Map<String, String> annotations) {
    SnapshotConfigMaps.putBuildRecord(
        annotations, sourceToken, specGeneration, builtAt, streamPosition);
    if (streamSlot != null) {
      annotations.put(ANNOTATION_STREAM_SLOT, streamSlot);
    }
  }
}
