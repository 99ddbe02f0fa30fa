package io.bloomoperator.cli;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;

/**
 * A snapshot whose manifest, chunk sizes and digests, header and payload digest all checked out.
 *
 * @param origin where it was read from, e.g. "directory out/" or "ConfigMap ns/ids-bloom"
 * @param signature "unsigned" or which key signed the manifest, see {@link ManifestTrust#check}
 */
record VerifiedSnapshot(Manifest manifest, BloomFilterBits bits, String origin, String signature) {}
