// Package reader reads the Bloom filters bloom-operator publishes as versioned, signed snapshots
// in ConfigMaps, with the acceptance contract of the Java reader (sidecar-lib).
//
// The core is free of I/O: ParseManifest, the acceptance rule and the decoding of payloads and
// delta chains work on values. A Reader reaches the cluster only through a ConfigMapGetter (one
// GET by name per manifest or chunk) and serves the last verified snapshot through an atomic
// pointer swap, so lookups never lock and never see a half-loaded filter.
//
// Lookups answer bit for bit as the Java reader, Guava (murmur3_x64_128, MURMUR128_MITZ_64) and
// Parquet's split-block Bloom filter (XXH64) do for the same payload. Failures carry the Java
// reader's LoadFailureReason names (see Reason).
package reader
