/**
 * The snapshot wire format, shared by the operator (which writes it) and the reader (which verifies
 * it): the Guava-compatible filter ({@link io.bloomoperator.snapshot.BloomFilterBits} and its
 * builder), the manifest, ConfigMap names, encoder and decoder, reader limits and Ed25519 manifest
 * signatures.
 *
 * <p>Applications mostly meet {@link io.bloomoperator.snapshot.KeyType}, {@link
 * io.bloomoperator.snapshot.Manifest}, the exceptions and {@link
 * io.bloomoperator.snapshot.Ed25519Keys}; the rest is public for the operator and its CLI. The
 * hashing (murmur3_x64_128 as Guava computes it) is package-private implementation.
 */
package io.bloomoperator.snapshot;
