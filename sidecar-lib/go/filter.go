package reader

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/cespare/xxhash/v2"
	"github.com/spaolacci/murmur3"
)

// Filter is a verified, immutable Bloom filter: safe for any number of goroutines without locks.
// It answers exactly as the Java reader (and Guava, or a Parquet split-block reader) does for the
// same payload.
type Filter struct {
	keyType KeyType
	layout  Layout
	k       int
	numBits uint64
	// bits is the payload's bit array without the Guava header, as published: big-endian 64-bit
	// words in the Guava layout, Parquet's blocks of little-endian 32-bit words in the split-block
	// layout. Bit p (of a delta, or of Guava's index) is bit p mod 64 of 64-bit word p / 64 in
	// either layout; bitByte maps it to a byte.
	bits []byte
}

// KeyType returns the key type the filter was built for.
func (f *Filter) KeyType() KeyType { return f.keyType }

// Layout returns the layout of the bits.
func (f *Filter) Layout() Layout { return f.layout }

// NumBits returns the number of bits (a multiple of 64).
func (f *Filter) NumBits() int64 { return int64(f.numBits) }

// NumHashFunctions returns k, the bits set per key (8 in the split-block layout).
func (f *Filter) NumHashFunctions() int { return f.k }

// MightContain reports whether the string key may have been added: false means it was not.
// It panics if the filter holds Long keys: hashing a key of the other type would give plausible
// wrong answers.
func (f *Filter) MightContain(key string) bool {
	f.requireType(KeyString)
	b := unsafe.Slice(unsafe.StringData(key), len(key))
	if f.layout == LayoutSplitBlock {
		return f.blockHolds(xxhash.Sum64(b))
	}
	h1, h2 := murmur3.Sum128(b)
	return f.guavaHolds(h1, h2, f.k)
}

// MightContainInt64 reports whether the Long key v may have been added: false means it was not.
// It panics if the filter holds String keys.
func (f *Filter) MightContainInt64(v int64) bool {
	f.requireType(KeyLong)
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(v))
	if f.layout == LayoutSplitBlock {
		return f.blockHolds(xxhash.Sum64(b[:]))
	}
	h1, h2 := murmur3.Sum128(b[:])
	return f.guavaHolds(h1, h2, f.k)
}

// MightContainBatch answers MightContain for each key into results[i]; results must be at least
// as long as keys. Keys are hashed in groups and the first probe of every key in a group is read
// before any is tested, so their cache misses overlap.
func (f *Filter) MightContainBatch(keys []string, results []bool) {
	f.requireType(KeyString)
	_ = results[:len(keys)]
	var hashes [batchGroup][2]uint64
	for from := 0; from < len(keys); from += batchGroup {
		group := keys[from:min(from+batchGroup, len(keys))]
		for i, key := range group {
			b := unsafe.Slice(unsafe.StringData(key), len(key))
			if f.layout == LayoutSplitBlock {
				hashes[i][0] = xxhash.Sum64(b)
			} else {
				hashes[i][0], hashes[i][1] = murmur3.Sum128(b)
			}
		}
		f.probeGroup(hashes[:len(group)], results[from:])
	}
}

// batchGroup keys are in flight at once: enough to overlap the memory latency of their first
// probes, few enough to stay in registers and L1.
const batchGroup = 16

// probeGroup answers for a group of hashes (h1, h2 for Guava; the XXH64 hash for split-block).
func (f *Filter) probeGroup(hashes [][2]uint64, results []bool) {
	if f.layout == LayoutSplitBlock {
		// One block per key and no early exit between its words: the loads of consecutive keys
		// already overlap.
		for i, h := range hashes {
			results[i] = f.blockHolds(h[0])
		}
		return
	}
	var first [batchGroup]byte
	for i, h := range hashes {
		first[i] = f.bits[bitByte(LayoutGuava, guavaIndex(h[0], f.numBits))]
	}
	for i, h := range hashes {
		p := guavaIndex(h[0], f.numBits)
		results[i] = first[i]&(1<<(p&7)) != 0 && f.guavaHolds(h[0]+h[1], h[1], f.k-1)
	}
}

// MightContainInt64Batch answers MightContainInt64 for each key into results[i], grouped as
// MightContainBatch.
func (f *Filter) MightContainInt64Batch(keys []int64, results []bool) {
	f.requireType(KeyLong)
	_ = results[:len(keys)]
	var hashes [batchGroup][2]uint64
	var b [8]byte
	for from := 0; from < len(keys); from += batchGroup {
		group := keys[from:min(from+batchGroup, len(keys))]
		for i, v := range group {
			binary.LittleEndian.PutUint64(b[:], uint64(v))
			if f.layout == LayoutSplitBlock {
				hashes[i][0] = xxhash.Sum64(b[:])
			} else {
				hashes[i][0], hashes[i][1] = murmur3.Sum128(b[:])
			}
		}
		f.probeGroup(hashes[:len(group)], results[from:])
	}
}

func (f *Filter) requireType(t KeyType) {
	if f.keyType != t {
		panic(fmt.Sprintf("bloom filter holds %s keys, asked about a %s key", f.keyType, t))
	}
}

// guavaHolds is Guava's MURMUR128_MITZ_64 probe: bit ((h1 + i*h2) & MaxInt64) mod numBits for
// i < k, with 64-bit wrapping arithmetic.
func (f *Filter) guavaHolds(combined, h2 uint64, k int) bool {
	for i := 0; i < k; i++ {
		if !f.bit(guavaIndex(combined, f.numBits)) {
			return false
		}
		combined += h2
	}
	return true
}

func guavaIndex(combined, numBits uint64) uint64 {
	return (combined & math.MaxInt64) % numBits
}

// guavaIndexes lists the k bit indexes a murmur3 hash selects (for tests of big geometries).
func guavaIndexes(h1, h2, numBits uint64, k int) []uint64 {
	out := make([]uint64, k)
	combined := h1
	for i := range out {
		out[i] = guavaIndex(combined, numBits)
		combined += h2
	}
	return out
}

func (f *Filter) bit(p uint64) bool {
	return f.bits[bitByte(f.layout, p)]&(1<<(p&7)) != 0
}

// bitByte is the byte holding bit p: bit p mod 64 of 64-bit word p / 64, the word big-endian in
// the Guava layout and little-endian in the split-block layout.
func bitByte(layout Layout, p uint64) uint64 {
	if layout == LayoutSplitBlock {
		return p >> 3
	}
	return (p>>6)<<3 | (7 - (p>>3)&7)
}

// splitBlockSalts are the eight salts of Parquet's split-block Bloom filter specification.
var splitBlockSalts = [8]uint32{
	0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31,
}

// splitBlockIndex is Parquet's block for an XXH64 hash among numBlocks: ((hash >> 32) * z) >> 32.
func splitBlockIndex(hash, numBlocks uint64) uint64 {
	return ((hash >> 32) * numBlocks) >> 32
}

// blockHolds tests the eight bits of the hash's block: in 32-bit word i, bit (key * salt[i]) >> 27
// with key the low 32 bits of the hash.
func (f *Filter) blockHolds(hash uint64) bool {
	block := f.bits[splitBlockIndex(hash, f.numBits/256)*blockBytes:][:blockBytes]
	key := uint32(hash)
	for i, salt := range splitBlockSalts {
		word := binary.LittleEndian.Uint32(block[4*i:])
		if word&(1<<((key*salt)>>27)) == 0 {
			return false
		}
	}
	return true
}
