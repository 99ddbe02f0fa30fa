/**
 * The snapshot wire format: what the operator writes and every reader verifies. This page is the
 * format's documentation, in the way Guava documents a serial form: the layout that is stored and
 * read back, field by field, and what stays compatible. The classes are how this library writes and
 * reads it; another implementation that follows this page interoperates.
 *
 * <h2>Objects</h2>
 *
 * For BloomFilter {@code <f>} in namespace {@code <ns>} ({@link
 * io.bloomoperator.snapshot.SnapshotNames}):
 *
 * <ul>
 *   <li>The manifest ConfigMap {@code <f>-bloom}: data {@code manifest.json} (the manifest, below)
 *       and, when signed, {@code manifest.sig}. Its annotations are operator bookkeeping, not
 *       format.
 *   <li>Chunk ConfigMaps {@code <f>-bloom-v<version>-<index>} (whole payload) and {@code
 *       <f>-bloom-v<version>-d<index>} (delta), immutable, each holding at most 1 MiB in binaryData
 *       {@code chunk}. Names longer than a ConfigMap name allows are cut and hashed the same way on
 *       both sides.
 * </ul>
 *
 * <h2>Payload</h2>
 *
 * The concatenated chunks of a whole snapshot are Guava's {@code BloomFilter.writeTo} bytes,
 * big-endian: {@code byte} strategy = 1 (MURMUR128_MITZ_64), {@code byte} numHashFunctions, {@code
 * int} numLongs, then numLongs {@code long} words; bit {@code p} is bit {@code p mod 64} of word
 * {@code p / 64}. Keys are hashed as Guava's {@code Funnels.stringFunnel(UTF_8)} ({@code String})
 * or {@code Funnels.longFunnel()} ({@code Long}). See {@link
 * io.bloomoperator.snapshot.SnapshotEncoder}.
 *
 * <h2>Manifest</h2>
 *
 * A JSON object ({@link io.bloomoperator.snapshot.Manifest}) with {@code format}, {@code version},
 * {@code filterName}, {@code keyType}, {@code numBits}, {@code numHashFunctions}, {@code keyCount},
 * {@code expectedFpp}, {@code totalBytes}, {@code sha256} (of the whole payload), {@code createdAt}
 * (RFC 3339) and {@code chunks} (name, bytes, sha256 of each, in payload order), all required;
 * format {@code guava-bloomfilter-chain-v1} adds {@code chain}: the base version and digest whose
 * payload {@code chunks} hold, and the deltas ({@link io.bloomoperator.snapshot.SnapshotDelta}:
 * gap-coded changed bit positions) that turn it into this version. Readers ignore unknown fields
 * and refuse unknown formats, so a field may be added without a new format name and a change of
 * meaning needs one.
 *
 * <h2>Signature</h2>
 *
 * {@code manifest.sig} is a JSON record {@code algorithm} (Ed25519), {@code keyId}, {@code
 * signature} over {@code "bloomoperator.io/manifest-signature/v1\n" + namespace + "\n"} followed by
 * {@code manifest.json} exactly as stored ({@link io.bloomoperator.snapshot.ManifestSignature}).
 *
 * <h2>Who uses what</h2>
 *
 * The operator and its CLI use the whole package. Applications meet only {@link
 * io.bloomoperator.snapshot.KeyType}, {@link io.bloomoperator.snapshot.Ed25519Keys} (to load a
 * trusted key), the exceptions and {@link io.bloomoperator.snapshot.LoadFailureReason}, through
 * sidecar-lib's {@code io.bloomoperator.watch}; the rest may change with the format. Murmur3
 * hashing is package-private implementation.
 */
package io.bloomoperator.snapshot;
