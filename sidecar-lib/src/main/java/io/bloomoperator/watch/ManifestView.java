package io.bloomoperator.watch;

import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import java.time.Instant;

/**
 * What an application may read of the manifest of the snapshot it is served: a view, so that the
 * wire format (chunks, deltas, chains) can change without changing this library's API.
 *
 * @param version the snapshot version (from 1; a re-created filter counts again from 1)
 * @param keyType the key type the snapshot was built for
 * @param keyCount the number of keys put into the filter
 * @param expectedFpp the false-positive probability expected for {@code keyCount} keys
 * @param numBits the number of bits of the filter
 * @param numHashFunctions the number of hash functions
 * @param sha256 the SHA-256 of the whole payload, hex
 * @param created when the operator built (or last re-stamped) this version
 * @param format the layout of the filter's bits ({@code Guava} or {@code SplitBlock})
 */
public record ManifestView(
    long version,
    KeyType keyType,
    long keyCount,
    double expectedFpp,
    long numBits,
    int numHashFunctions,
    String sha256,
    Instant created,
    FilterFormat format) {

  static ManifestView of(Manifest manifest) {
    return new ManifestView(
        manifest.version(),
        manifest.keyType(),
        manifest.keyCount(),
        manifest.expectedFpp(),
        manifest.numBits(),
        manifest.numHashFunctions(),
        manifest.sha256(),
        manifest.created(),
        manifest.filterFormat());
  }
}
