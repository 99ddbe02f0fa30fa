package io.bloomoperator.publish;

import io.bloomoperator.snapshot.SnapshotConfigMaps;
import java.time.Instant;
import java.util.Map;

/**
 * What a build was made from. Kept on the manifest ConfigMap, not only in the status, so that a
 * reconcile caused by the operator's own manifest write (or a lost status) is recognised as up to
 * date instead of rebuilding.
 */
public record BuildRecord(String sourceToken, long specGeneration, Instant builtAt) {

  void annotate(Map<String, String> annotations) {
    SnapshotConfigMaps.putBuildRecord(annotations, sourceToken, specGeneration, builtAt);
  }
}
