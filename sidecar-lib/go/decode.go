package reader

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
)

// chunkSource supplies the bytes of one chunk, or nil when it does not exist. Its errors keep
// their reason (CHUNK for a malformed ConfigMap, API for the getter's failures).
type chunkSource func(ctx context.Context, ref ChunkRef) ([]byte, error)

// load returns the filter of m for a reader holding held (nil before the first load, or the
// served snapshot): when held is the chain's base or one of its versions, only the deltas after
// it are fetched and applied to a copy of its bits; otherwise the base and every delta. Every
// chunk is checked (present, size, SHA-256) before a byte of it is used, the base against its
// digest, the result against the manifest's sha256.
//
// Chunks are fetched up to parallel at once (fetchChunks) and used in order.
func load(ctx context.Context, m *Manifest, held *Snapshot, src chunkSource, parallel int) (*Filter, error) {
	if held != nil {
		if deltas, ok := m.deltasAfter(held.Version, held.SHA256); ok && describes(m, held.Filter) {
			bits := make([]byte, len(held.Filter.bits))
			copy(bits, held.Filter.bits) // the served bits never change
			f := newFilter(m, bits)
			return f, applyAndVerify(ctx, m, f, deltas, m.SHA256, src, parallel)
		}
	}
	f, err := decodeBase(ctx, m, src, parallel)
	if err != nil {
		return nil, err
	}
	if m.Chain == nil {
		return f, nil
	}
	// The base's bits are ours alone (nothing serves them yet): apply the chain in place.
	return f, applyAndVerify(ctx, m, f, m.Chain.Deltas, m.SHA256, src, parallel)
}

func newFilter(m *Manifest, bits []byte) *Filter {
	return &Filter{keyType: m.KeyType, layout: m.layout, k: m.NumHashFunctions, numBits: uint64(m.NumBits), bits: bits}
}

// describes: same key type, layout and geometry, the condition for applying a delta.
func describes(m *Manifest, f *Filter) bool {
	return f != nil && m.KeyType == f.keyType && m.layout == f.layout &&
		uint64(m.NumBits) == f.numBits && m.NumHashFunctions == f.k
}

// decodeBase reads the payload m.Chunks hold, verified against the base's digest.
func decodeBase(ctx context.Context, m *Manifest, src chunkSource, parallel int) (*Filter, error) {
	p := &payloadParser{m: m}
	if m.layout == LayoutSplitBlock {
		// No header to check: the size comes from the manifest the limits accepted.
		p.bits = make([]byte, m.NumBits/8)
	}
	total := sha256.New()
	where := func(i int) string { return fmt.Sprintf("chunk %d ('%s')", i, m.Chunks[i].Name) }
	err := fetchChunks(ctx, m.Chunks, src, parallel, where, func(i int, data []byte) error {
		total.Write(data)
		if err := p.accept(data); err != nil {
			return chunkError(ReasonVerification, i, where(i)+": "+err.Error())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if actual := hex.EncodeToString(total.Sum(nil)); !strings.EqualFold(actual, m.BaseSHA256()) {
		prefix := ""
		if m.Chain != nil {
			prefix = fmt.Sprintf("base v%d ", m.Chain.BaseVersion)
		}
		return nil, verification(fmt.Sprintf("%spayload sha256 mismatch: manifest says %s, computed %s over all %d chunks",
			prefix, m.BaseSHA256(), actual, len(m.Chunks)))
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	return newFilter(m, p.bits), nil
}

// checkChunk: the chunk exists, has the announced size and SHA-256.
func checkChunk(ref ChunkRef, data []byte, where string, index int, digest hash.Hash) error {
	if data == nil {
		return chunkError(ReasonVerification, index, where+" is missing")
	}
	if len(data) != int(ref.Bytes) {
		return chunkError(ReasonVerification, index, fmt.Sprintf(
			"%s: size mismatch: manifest says %d bytes, got %d", where, ref.Bytes, len(data)))
	}
	digest.Reset()
	digest.Write(data)
	if actual := hex.EncodeToString(digest.Sum(nil)); !strings.EqualFold(actual, ref.SHA256) {
		return chunkError(ReasonVerification, index, fmt.Sprintf(
			"%s: sha256 mismatch: manifest says %s, computed %s", where, ref.SHA256, actual))
	}
	return nil
}

// payloadParser streams payload bytes, split anywhere, into the bit array; in the Guava layout
// the header is checked against the manifest before the (possibly large) array is allocated.
type payloadParser struct {
	m      *Manifest
	header [guavaHeaderBytes]byte
	filled int
	bits   []byte
	n      int // bytes of bits written
}

func (p *payloadParser) accept(data []byte) error {
	if p.m.layout == LayoutGuava {
		for p.filled < guavaHeaderBytes && len(data) > 0 {
			p.header[p.filled] = data[0]
			p.filled++
			data = data[1:]
			if p.filled == guavaHeaderBytes {
				if err := p.checkHeader(); err != nil {
					return err
				}
			}
		}
	}
	if len(data) == 0 {
		return nil
	}
	if len(data) > len(p.bits)-p.n {
		return fmt.Errorf("payload is longer than the %d bytes of bits its header announces", len(p.bits))
	}
	p.n += copy(p.bits[p.n:], data)
	return nil
}

func (p *payloadParser) checkHeader() error {
	strategy, k := int(p.header[0]), int(p.header[1])
	numLongs := int32(binary.BigEndian.Uint32(p.header[2:]))
	wantLongs := int32(p.m.NumBits / 64)
	if strategy != guavaStrategyMitz {
		return fmt.Errorf("header strategy ordinal is %d, expected %d (MURMUR128_MITZ_64)", strategy, guavaStrategyMitz)
	}
	if k != p.m.NumHashFunctions {
		return fmt.Errorf("header numHashFunctions is %d but the manifest says %d", k, p.m.NumHashFunctions)
	}
	if numLongs != wantLongs {
		return fmt.Errorf("header numLongs is %d (%d bits) but the manifest says %d (%d bits)",
			numLongs, int64(numLongs)*64, wantLongs, int64(wantLongs)*64)
	}
	if k < 1 {
		return fmt.Errorf("header numHashFunctions is 0")
	}
	p.bits = make([]byte, int64(numLongs)*8)
	return nil
}

func (p *payloadParser) finish() error {
	if p.m.layout == LayoutGuava && p.filled < guavaHeaderBytes {
		return verification(fmt.Sprintf("payload ended after %d bytes, inside the %d-byte header", p.filled, guavaHeaderBytes))
	}
	if p.n != len(p.bits) {
		return verification(fmt.Sprintf("payload ended after %d bytes of bits, expected %d", p.n, len(p.bits)))
	}
	return nil
}

// payloadSHA256 is the digest of f's whole payload as published: Guava's header and words, or
// Parquet's bitset.
func payloadSHA256(f *Filter) string {
	h := sha256.New()
	if f.layout == LayoutGuava {
		var header [guavaHeaderBytes]byte
		header[0] = guavaStrategyMitz
		header[1] = byte(f.k)
		binary.BigEndian.PutUint32(header[2:], uint32(f.numBits/64))
		h.Write(header[:])
	}
	h.Write(f.bits)
	return hex.EncodeToString(h.Sum(nil))
}

func applyAndVerify(ctx context.Context, m *Manifest, f *Filter, deltas []Delta, wantSHA string, src chunkSource, parallel int) error {
	for i := range deltas {
		if err := applyDelta(ctx, f, &deltas[i], src, parallel); err != nil {
			return err
		}
	}
	if actual := payloadSHA256(f); !strings.EqualFold(actual, wantSHA) {
		return verification(fmt.Sprintf("payload sha256 mismatch after applying %d delta(s): manifest says %s, computed %s",
			len(deltas), wantSHA, actual))
	}
	return nil
}

// Delta encoding (docs/snapshot-protocol.md, "Delta chains"): encoding 1, k, numLongs (int32 BE),
// changed-bit count (int64 BE), then the positions as unsigned LEB128 gaps.
const (
	deltaHeaderBytes   = 14
	deltaBitPositions  = 1
	maxVarintShift     = 63
	varintPayloadBits  = 0x7f
	varintContinuation = 0x80
)

// applyDelta flips d's bit positions in f, each chunk checked before a byte of it is used.
func applyDelta(ctx context.Context, f *Filter, d *Delta, src chunkSource, parallel int) error {
	p := &deltaParser{f: f, d: d, previous: -1}
	where := func(i int) string { return fmt.Sprintf("delta v%d chunk %d ('%s')", d.Version, i, d.Chunks[i].Name) }
	err := fetchChunks(ctx, d.Chunks, src, parallel, where, func(i int, data []byte) error {
		if err := p.accept(data); err != nil {
			return chunkError(ReasonVerification, i, where(i)+": "+err.Error())
		}
		return nil
	})
	if err != nil {
		return err
	}
	return p.finish()
}

type deltaParser struct {
	f         *Filter
	d         *Delta
	header    [deltaHeaderBytes]byte
	filled    int
	remaining int64
	previous  int64
	value     uint64
	shift     uint
}

func (p *deltaParser) accept(data []byte) error {
	for p.filled < deltaHeaderBytes && len(data) > 0 {
		p.header[p.filled] = data[0]
		p.filled++
		data = data[1:]
		if p.filled == deltaHeaderBytes {
			if err := p.checkHeader(); err != nil {
				return err
			}
		}
	}
	numBits := int64(p.f.numBits)
	for _, b := range data {
		if p.remaining == 0 {
			return fmt.Errorf("bytes after the last of its %d bit positions", p.d.ChangedBits)
		}
		if p.shift == maxVarintShift && b&0x7e != 0 {
			return fmt.Errorf("varint overflows 64 bits")
		}
		p.value |= uint64(b&varintPayloadBits) << p.shift
		if b&varintContinuation != 0 {
			p.shift += 7
			if p.shift > maxVarintShift {
				return fmt.Errorf("varint longer than 10 bytes")
			}
			continue
		}
		// Positions left after the previous one: previous+1 .. numBits-1. A gap with the top bit
		// set is negative as int64 and refused like any gap too large.
		gap := int64(p.value)
		if gap < 0 || gap >= numBits-p.previous-1 {
			return fmt.Errorf("bit position beyond the filter's %d bits", numBits)
		}
		pos := p.previous + 1 + gap
		p.f.bits[bitByte(p.f.layout, uint64(pos))] ^= 1 << (pos & 7)
		p.previous = pos
		p.remaining--
		p.value, p.shift = 0, 0
	}
	return nil
}

func (p *deltaParser) checkHeader() error {
	encoding, k := int(p.header[0]), int(p.header[1])
	numLongs := int32(binary.BigEndian.Uint32(p.header[2:]))
	count := int64(binary.BigEndian.Uint64(p.header[6:]))
	wantLongs := int32(p.f.numBits / 64)
	if encoding != deltaBitPositions {
		return fmt.Errorf("delta encoding is %d, expected %d", encoding, deltaBitPositions)
	}
	if k != p.f.k || numLongs != wantLongs {
		return fmt.Errorf("delta header says k=%d, %d words; the manifest says k=%d, %d words", k, numLongs, p.f.k, wantLongs)
	}
	if count != p.d.ChangedBits {
		return fmt.Errorf("delta header says %d changed bits, the manifest says %d", count, p.d.ChangedBits)
	}
	p.remaining = count
	return nil
}

func (p *deltaParser) finish() error {
	if p.filled < deltaHeaderBytes {
		return verification(fmt.Sprintf("delta v%d ended inside its %d-byte header", p.d.Version, deltaHeaderBytes))
	}
	if p.remaining != 0 || p.shift != 0 {
		return verification(fmt.Sprintf("delta v%d ended with %d of its %d bit positions missing",
			p.d.Version, p.remaining, p.d.ChangedBits))
	}
	return nil
}
