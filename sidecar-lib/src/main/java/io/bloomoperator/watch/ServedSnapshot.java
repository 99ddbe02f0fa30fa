package io.bloomoperator.watch;

import io.bloomoperator.snapshot.AnnouncedManifest;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomLookup;
import io.bloomoperator.snapshot.Manifest;
import java.nio.file.Path;

/**
 * What a {@link LiveBloomFilter} serves: an announcement that was accepted and the verified bits it
 * describes, on the heap ({@link BloomFilterBits}) or mapped from {@code file} in the local
 * snapshot directory. Immutable but for one thing, so one volatile write publishes it completely
 * and a reader sees either the whole old or the whole new filter: the heap bits of a stable-chain
 * version may be shared with the next version, into which the watcher thread ORs an add-only delta
 * in place ({@link io.bloomoperator.snapshot.InPlaceDeltas}) before it publishes the next snapshot;
 * a lookup holding this one then sees each of those bits old or new.
 *
 * @param file the payload file the bits are mapped from, or null for bits on the heap
 */
record ServedSnapshot(AnnouncedManifest announced, BloomLookup bits, Path file) {

  /** A snapshot whose bits are on the heap. */
  ServedSnapshot(AnnouncedManifest announced, BloomFilterBits bits) {
    this(announced, bits, null);
  }

  Manifest manifest() {
    return announced.manifest();
  }

  long version() {
    return announced.version();
  }

  /** The bits as a heap array, or null when they are mapped from a file. */
  BloomFilterBits heapBits() {
    return bits instanceof BloomFilterBits heap ? heap : null;
  }
}
