package io.bloomoperator.watch;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;

/**
 * A verified snapshot: what a {@link LiveBloomFilter} serves. Immutable (all parts are), so one
 * volatile write publishes it completely and a reader sees either the whole old or the whole new
 * filter.
 *
 * @param manifestJson the exact manifest text it was announced with (what a signature covers)
 * @param signature the manifest's signature data, or null if it was not signed
 */
record LoadedSnapshot(
    Manifest manifest, BloomFilterBits bits, String manifestJson, String signature) {

  long version() {
    return manifest.version();
  }

  /** Whether {@code other} announces this very snapshot; see {@link #same(Manifest, Manifest)}. */
  boolean isSameAs(Manifest other) {
    return same(manifest, other);
  }

  /**
   * Two manifests describe the same snapshot when version and payload digest agree. The digest is
   * part of the identity because a filter that is deleted and re-created starts counting versions
   * again.
   */
  static boolean same(Manifest a, Manifest b) {
    return a != null
        && b != null
        && a.version() == b.version()
        && a.sha256().equalsIgnoreCase(b.sha256());
  }
}
