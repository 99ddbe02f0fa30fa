package reader

import (
	"fmt"
	"math"
	"runtime/debug"
)

// MaxChunkBytes is the most a chunk may announce: what one ConfigMap can hold (1 MiB).
const MaxChunkBytes = 1024 * 1024

// DefaultMaxChunks is more chunks than a manifest ConfigMap (1 MiB) can list.
const DefaultMaxChunks = 10_000

// formatMaxBytes is the largest payload the format describes.
const formatMaxBytes = guavaHeaderBytes + maxBits/8

// Limits are the largest snapshot a reader accepts, checked on the manifest before anything is
// fetched or allocated. A reader holds the served filter and the one it loads, so MaxTotalBytes
// should be at most half of what the process may spend on filters.
type Limits struct {
	// MaxTotalBytes bounds totalBytes (and numBits / 8), and separately the sum of delta bytes.
	MaxTotalBytes int64
	// MaxChunks bounds the number of chunks, base and deltas together.
	MaxChunks int
}

// DefaultLimits is a quarter of the Go memory limit (GOMEMLIMIT) when one is set, else 1 GiB,
// and DefaultMaxChunks chunks.
func DefaultLimits() Limits {
	total := int64(1 << 30)
	if limit := debug.SetMemoryLimit(-1); limit > 0 && limit < math.MaxInt64 {
		total = max(1, min(formatMaxBytes, limit/4))
	}
	return Limits{MaxTotalBytes: total, MaxChunks: DefaultMaxChunks}
}

// check applies the limits and the naming rule to a valid manifest of filter: arithmetic on the
// manifest only. In order: the filter name, the sizes, the chunk count, then each chunk (base,
// then each delta's) for its size and canonical name.
func (l Limits) check(m *Manifest, filter string) error {
	what := fmt.Sprintf("manifest of '%s' v%d", m.FilterName, m.Version)
	if m.FilterName != filter {
		return newError(ReasonWrongFilter, fmt.Sprintf("%s is for filter '%s', expected '%s'", what, m.FilterName, filter))
	}
	if m.TotalBytes > l.MaxTotalBytes || m.NumBits/8 > l.MaxTotalBytes {
		return newError(ReasonTooLarge, fmt.Sprintf(
			"%s announces %d bytes (numBits %d), more than this reader's limit of %d bytes",
			what, m.TotalBytes, m.NumBits, l.MaxTotalBytes))
	}
	// Deltas are streamed a chunk at a time, but every byte is downloaded and digested: a chain
	// may not cost more than a whole filter the reader accepts.
	if d := m.deltaBytes(); d > l.MaxTotalBytes {
		return newError(ReasonTooLarge, fmt.Sprintf(
			"%s chains %d bytes of deltas, more than this reader's limit of %d bytes", what, d, l.MaxTotalBytes))
	}
	if n := m.chunkCount(); n > l.MaxChunks {
		return newError(ReasonTooLarge, fmt.Sprintf(
			"%s lists %d chunks, more than this reader's limit of %d", what, n, l.MaxChunks))
	}
	base := m.BaseVersion()
	if err := checkChunks(what, "chunk ", m.Chunks, func(i int) string { return ChunkName(filter, base, i) }); err != nil {
		return err
	}
	for _, d := range m.Deltas() {
		v := d.Version
		label := fmt.Sprintf("delta v%d chunk ", v)
		if err := checkChunks(what, label, d.Chunks, func(i int) string { return DeltaChunkName(filter, v, i) }); err != nil {
			return err
		}
	}
	return nil
}

// checkChunks: each chunk fits a ConfigMap and has the canonical name of its filter, version and
// index, so a manifest cannot make a reader read a foreign ConfigMap.
func checkChunks(what, label string, refs []ChunkRef, canonical func(int) string) error {
	for i, c := range refs {
		if c.Bytes > MaxChunkBytes {
			return newError(ReasonTooLarge, fmt.Sprintf(
				"%s: %s%d announces %d bytes, more than a ConfigMap holds (%d)", what, label, i, c.Bytes, MaxChunkBytes))
		}
		if want := canonical(i); c.Name != want {
			return newError(ReasonForeignChunk, fmt.Sprintf(
				"%s: %s%d is named '%s', expected '%s'", what, label, i, c.Name, want))
		}
	}
	return nil
}
