package io.bloomoperator.watch;

import io.bloomoperator.snapshot.AnnouncedManifest;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;

/**
 * What a {@link LiveBloomFilter} serves: an announcement that was accepted and the verified bits it
 * describes. Immutable (all parts are), so one volatile write publishes it completely and a reader
 * sees either the whole old or the whole new filter.
 */
record ServedSnapshot(AnnouncedManifest announced, BloomFilterBits bits) {

  Manifest manifest() {
    return announced.manifest();
  }

  long version() {
    return announced.version();
  }
}
