package io.bloomoperator.snapshot;

import java.util.Objects;

/**
 * What was announced for a filter: the parsed manifest, the exact JSON text it was parsed from
 * (what a signature covers; a re-serialisation would not verify) and the signature data that came
 * with it. The one record of this triple, whether read from the manifest ConfigMap, kept beside the
 * served snapshot or written to a reader's local snapshot directory. Nothing in it is checked
 * against a reader's limits or keys: that is the reader's acceptance rule.
 *
 * @param manifest the parsed manifest
 * @param json {@value SnapshotNames#MANIFEST_DATA_KEY} exactly as stored
 * @param signature {@value SnapshotNames#SIGNATURE_DATA_KEY}, or null when unsigned
 */
public record AnnouncedManifest(Manifest manifest, String json, String signature) {

  public AnnouncedManifest {
    Objects.requireNonNull(manifest, "manifest");
    Objects.requireNonNull(json, "json");
  }

  /** The announced version. */
  public long version() {
    return manifest.version();
  }

  /**
   * Whether {@code other} announces the same snapshot: version and payload digest agree. The digest
   * is part of the identity because a filter that is deleted and re-created counts from 1 again.
   */
  public boolean announcesSameAs(AnnouncedManifest other) {
    return other != null
        && manifest.version() == other.manifest.version()
        && manifest.sha256().equalsIgnoreCase(other.manifest.sha256());
  }
}
