package reader

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/spaolacci/murmur3"
)

// This file is a small publisher for tests: it writes filters, payloads, deltas, manifests and
// signatures the way docs/snapshot-protocol.md lays them out, so the reader can be exercised
// before (and beside) the Java-generated test vectors.

type testFilter struct{ *Filter }

func newTestFilter(keyType KeyType, layout Layout, numBits int64, k int) testFilter {
	return testFilter{&Filter{keyType: keyType, layout: layout, k: k, numBits: uint64(numBits), bits: make([]byte, numBits/8)}}
}

func (f testFilter) set(p uint64) { f.bits[bitByte(f.layout, p)] |= 1 << (p & 7) }

func (f testFilter) putBytes(b []byte) {
	if f.layout == LayoutSplitBlock {
		hash := xxhash.Sum64(b)
		block := splitBlockIndex(hash, f.numBits/256)
		key := uint32(hash)
		for i, salt := range splitBlockSalts {
			f.set(block*256 + uint64(i)*32 + uint64((key*salt)>>27))
		}
		return
	}
	h1, h2 := murmur3.Sum128(b)
	for _, p := range guavaIndexes(h1, h2, f.numBits, f.k) {
		f.set(p)
	}
}

func (f testFilter) put(key string) { f.putBytes([]byte(key)) }

func (f testFilter) putInt64(v int64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(v))
	f.putBytes(b[:])
}

func (f testFilter) clone() testFilter {
	c := *f.Filter
	c.bits = append([]byte(nil), f.bits...)
	return testFilter{&c}
}

func (f testFilter) payload() []byte {
	if f.layout == LayoutSplitBlock {
		return append([]byte(nil), f.bits...)
	}
	out := []byte{guavaStrategyMitz, byte(f.k), 0, 0, 0, 0}
	binary.BigEndian.PutUint32(out[2:], uint32(f.numBits/64))
	return append(out, f.bits...)
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// encodeDelta writes the delta from a to b: the header, then gap-coded positions.
func encodeDelta(a, b testFilter) (data []byte, changed int64) {
	var positions []uint64
	for p := uint64(0); p < a.numBits; p++ {
		if a.bit(p) != b.bit(p) {
			positions = append(positions, p)
		}
	}
	out := make([]byte, deltaHeaderBytes)
	out[0] = deltaBitPositions
	out[1] = byte(a.k)
	binary.BigEndian.PutUint32(out[2:], uint32(a.numBits/64))
	binary.BigEndian.PutUint64(out[6:], uint64(len(positions)))
	previous := int64(-1)
	for _, p := range positions {
		out = binary.AppendUvarint(out, uint64(int64(p)-previous-1))
		previous = int64(p)
	}
	return out, int64(len(positions))
}

type jsonChunk struct {
	Name   string `json:"name"`
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
}

type jsonDelta struct {
	Version     int64       `json:"version"`
	Bytes       int64       `json:"bytes"`
	ChangedBits int64       `json:"changedBits"`
	SHA256      string      `json:"sha256"`
	Chunks      []jsonChunk `json:"chunks"`
}

type jsonChain struct {
	BaseVersion int64       `json:"baseVersion"`
	BaseSHA256  string      `json:"baseSha256"`
	Deltas      []jsonDelta `json:"deltas"`
}

type jsonManifest struct {
	Format           string      `json:"format"`
	Version          int64       `json:"version"`
	FilterName       string      `json:"filterName"`
	KeyType          string      `json:"keyType"`
	NumBits          int64       `json:"numBits"`
	NumHashFunctions int         `json:"numHashFunctions"`
	KeyCount         int64       `json:"keyCount"`
	ExpectedFpp      float64     `json:"expectedFpp"`
	TotalBytes       int64       `json:"totalBytes"`
	SHA256           string      `json:"sha256"`
	CreatedAt        string      `json:"createdAt"`
	Chunks           []jsonChunk `json:"chunks"`
	Chain            *jsonChain  `json:"chain,omitempty"`
	Store            string      `json:"store,omitempty"`
}

// cluster is the namespace's ConfigMaps, by name: what a ConfigMapGetter reads in the tests.
type cluster struct {
	namespace string
	maps      map[string]*ConfigMap
	mu        sync.Mutex // chunks are fetched in parallel
	gets      []string
}

func newCluster(namespace string) *cluster {
	return &cluster{namespace: namespace, maps: map[string]*ConfigMap{}}
}

func (c *cluster) GetConfigMap(_ context.Context, namespace, name string) (*ConfigMap, error) {
	c.mu.Lock()
	c.gets = append(c.gets, name)
	c.mu.Unlock()
	cm, ok := c.maps[name]
	if !ok || namespace != c.namespace {
		return nil, fmt.Errorf("configmaps %q: %w", name, ErrNotFound)
	}
	return cm, nil
}

// writeChunks stores data as chunks of at most size bytes named by name(i).
func (c *cluster) writeChunks(data []byte, size int, name func(int) string) []jsonChunk {
	var refs []jsonChunk
	for i := 0; len(data) > 0; i++ {
		n := min(size, len(data))
		part := data[:n]
		data = data[n:]
		refs = append(refs, jsonChunk{Name: name(i), Bytes: n, SHA256: sha(part)})
		c.maps[name(i)] = &ConfigMap{
			Metadata:   ObjectMeta{Name: name(i), Namespace: c.namespace},
			BinaryData: map[string]string{ChunkKey: base64.StdEncoding.EncodeToString(part)},
		}
	}
	return refs
}

// publisher writes versions of one filter like the operator: whole snapshots and deltas.
type publisher struct {
	c         *cluster
	filter    string
	chunkSize int
	key       ed25519.PrivateKey // nil: unsigned
	seconds   int
	last      *jsonManifest
	lastBits  testFilter
}

func formatOf(layout Layout, chain bool) string {
	switch {
	case layout == LayoutGuava && !chain:
		return FormatGuava
	case layout == LayoutGuava:
		return FormatGuavaChain
	case !chain:
		return FormatSplitBlock
	}
	return FormatSplitBlockChain
}

func (p *publisher) createdAt() string {
	p.seconds++
	return fmt.Sprintf("2026-12-02T22:%02d:%02d.000Z", p.seconds/60, p.seconds%60)
}

// whole publishes f as a whole snapshot of version.
func (p *publisher) whole(version int64, f testFilter) *jsonManifest {
	payload := f.payload()
	m := &jsonManifest{
		Format: formatOf(f.layout, false), Version: version, FilterName: p.filter,
		KeyType: string(f.keyType), NumBits: int64(f.numBits), NumHashFunctions: f.k,
		KeyCount: 3, ExpectedFpp: 0.01, TotalBytes: int64(len(payload)), SHA256: sha(payload),
		CreatedAt: p.createdAt(),
		Chunks:    p.c.writeChunks(payload, p.chunkSize, func(i int) string { return ChunkName(p.filter, version, i) }),
	}
	p.last, p.lastBits = m, f.clone()
	return m
}

// delta publishes f as a delta of version on the last published one.
func (p *publisher) delta(version int64, f testFilter) *jsonManifest {
	data, changed := encodeDelta(p.lastBits, f)
	prev := p.last
	chain := &jsonChain{BaseVersion: prev.Version, BaseSHA256: prev.SHA256}
	if prev.Chain != nil {
		c := *prev.Chain
		c.Deltas = append([]jsonDelta(nil), c.Deltas...)
		chain = &c
	}
	payload := f.payload()
	chain.Deltas = append(chain.Deltas, jsonDelta{
		Version: version, Bytes: int64(len(data)), ChangedBits: changed, SHA256: sha(payload),
		Chunks: p.c.writeChunks(data, p.chunkSize, func(i int) string { return DeltaChunkName(p.filter, version, i) }),
	})
	m := *prev
	m.Format = formatOf(f.layout, true)
	m.Version, m.SHA256, m.TotalBytes, m.CreatedAt, m.Chain = version, sha(payload), int64(len(payload)), p.createdAt(), chain
	p.last, p.lastBits = &m, f.clone()
	return &m
}

func (p *publisher) sign(text string) string {
	pub := p.key.Public().(ed25519.PublicKey)
	sig := ed25519.Sign(p.key, signedBytes(p.c.namespace, text))
	rec, _ := json.Marshal(map[string]string{
		"algorithm": "Ed25519", "keyId": keyID(pub), "signature": base64.StdEncoding.EncodeToString(sig),
	})
	return string(rec)
}

// announce writes the manifest ConfigMap holding m (and its signature when p signs).
func (p *publisher) announce(t testing.TB, m *jsonManifest) string {
	t.Helper()
	text, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	data := map[string]string{ManifestKey: string(text)}
	if p.key != nil {
		data[SignatureKey] = p.sign(string(text))
	}
	name := ManifestName(p.filter)
	p.c.maps[name] = &ConfigMap{Metadata: ObjectMeta{Name: name, Namespace: p.c.namespace}, Data: data}
	return string(text)
}

func publicPEM(t *testing.T, key ed25519.PrivateKey) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

func newKey(t *testing.T, seed byte) ed25519.PrivateKey {
	t.Helper()
	s := make([]byte, ed25519.SeedSize)
	for i := range s {
		s[i] = seed
	}
	return ed25519.NewKeyFromSeed(s)
}

func sortedKeys(m map[string]*ConfigMap) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
