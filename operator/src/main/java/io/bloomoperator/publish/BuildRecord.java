package io.bloomoperator.publish;

import io.bloomoperator.snapshot.SnapshotConfigMaps;
import java.time.Instant;
import java.util.Map;

/**
 * What a build was made from. Kept on the manifest ConfigMap, not only in the status, so that a
 * reconcile caused by the operator's own manifest write (or a lost status) is recognised as up to
 * date instead of rebuilding.
 */
public record BuildRecord(
    String sourceToken, long specGeneration, Instant builtAt, String streamPosition) {

  /** A build of a filter without a change stream. */
  public BuildRecord(String sourceToken, long specGeneration, Instant builtAt) {
    this(sourceToken, specGeneration, builtAt, null);
  }

  /**
   * This record with the change stream at {@code position} (its text form, null: none): a stream
   * publish keeps the full build's token, generation and time, so the next full build is due when
   * it was.
   */
  public BuildRecord at(String position) {
    return new BuildRecord(sourceToken, specGeneration, builtAt, position);
  }

  void annotate(Map<String, String> annotations) {
    SnapshotConfigMaps.putBuildRecord(
        annotations, sourceToken, specGeneration, builtAt, streamPosition);
  }
}
