package reader

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Manifest format ids: the layout of the bits and whether the chunks hold the whole payload or a
// base plus deltas. A reader refuses any other id, so it never misreads bits of a layout it does
// not know.
const (
	FormatGuava           = "guava-bloomfilter-v1"
	FormatGuavaChain      = "guava-bloomfilter-chain-v1"
	FormatSplitBlock      = "parquet-splitblock-v1"
	FormatSplitBlockChain = "parquet-splitblock-chain-v1"
)

// Layout is how the bits of a filter are laid out and hashed.
type Layout int

const (
	// LayoutGuava is Guava's BloomFilter (MURMUR128_MITZ_64): a 6-byte header, then big-endian
	// 64-bit words; keys hashed with murmur3_x64_128.
	LayoutGuava Layout = iota
	// LayoutSplitBlock is Apache Parquet's split-block Bloom filter: 32-byte blocks, no header;
	// keys hashed with XXH64.
	LayoutSplitBlock
)

func (l Layout) String() string {
	if l == LayoutSplitBlock {
		return "SplitBlock"
	}
	return "Guava"
}

// headerBytes is what precedes the bit array in the layout's payload.
func (l Layout) headerBytes() int64 {
	if l == LayoutSplitBlock {
		return 0
	}
	return guavaHeaderBytes
}

// layoutOf returns the layout a format id names and whether it is a chain id; ok is false for an
// id this reader does not know.
func layoutOf(format string) (layout Layout, chain bool, ok bool) {
	switch format {
	case FormatGuava:
		return LayoutGuava, false, true
	case FormatGuavaChain:
		return LayoutGuava, true, true
	case FormatSplitBlock:
		return LayoutSplitBlock, false, true
	case FormatSplitBlockChain:
		return LayoutSplitBlock, true, true
	}
	return 0, false, false
}

// KeyType is how keys are turned into bytes before hashing.
type KeyType string

const (
	// KeyString keys are hashed as their UTF-8 bytes.
	KeyString KeyType = "String"
	// KeyLong keys are signed 64-bit integers, hashed as their 8 little-endian bytes.
	KeyLong KeyType = "Long"
)

const (
	minVersion        = 1
	maxVersion        = 999_999_999_999_999_999
	maxBits           = int64(math.MaxInt32) * 64
	maxHashFunctions  = 255
	splitBlockK       = 8
	blockBytes        = 32
	maxBlocks         = (math.MaxInt32 - 8) / 4
	guavaHeaderBytes  = 6
	guavaStrategyMitz = 1
)

// ChunkRef names one chunk ConfigMap with the size and SHA-256 of the bytes it must hold.
type ChunkRef struct {
	Name   string
	Bytes  int32
	SHA256 string
}

// Delta is one link of a chain: the bits that changed from the version before it to Version.
type Delta struct {
	Version     int64
	Bytes       int64
	ChangedBits int64
	// SHA256 is the digest of the whole payload of Version, after applying this delta.
	SHA256 string
	Chunks []ChunkRef
}

// Chain is the base (the payload Manifest.Chunks hold) and the deltas after it.
type Chain struct {
	BaseVersion int64
	BaseSHA256  string
	Deltas      []Delta
}

// Manifest is the parsed manifest.json. TotalBytes and SHA256 always describe this version's
// whole payload; for a chain, Chunks hold the base's payload and Chain the deltas.
type Manifest struct {
	Format           string
	Version          int64
	FilterName       string
	KeyType          KeyType
	NumBits          int64
	NumHashFunctions int
	KeyCount         int64
	ExpectedFpp      float64
	TotalBytes       int64
	SHA256           string
	CreatedAt        string
	Chunks           []ChunkRef
	Chain            *Chain // nil unless a chain format
	Store            string // "" when the chunks are ConfigMaps
	HasStore         bool

	layout  Layout
	created time.Time
}

// Layout returns the layout of the manifest's bits.
func (m *Manifest) Layout() Layout { return m.layout }

// Created returns CreatedAt as an instant.
func (m *Manifest) Created() time.Time { return m.created }

// BaseVersion is the version whose whole payload Chunks hold.
func (m *Manifest) BaseVersion() int64 {
	if m.Chain == nil {
		return m.Version
	}
	return m.Chain.BaseVersion
}

// BaseSHA256 is the digest of the payload Chunks hold.
func (m *Manifest) BaseSHA256() string {
	if m.Chain == nil {
		return m.SHA256
	}
	return m.Chain.BaseSHA256
}

// Deltas are the deltas after the base, in order; none unless chained.
func (m *Manifest) Deltas() []Delta {
	if m.Chain == nil {
		return nil
	}
	return m.Chain.Deltas
}

func (m *Manifest) deltaBytes() int64 {
	var sum int64
	for _, d := range m.Deltas() {
		sum += d.Bytes
	}
	return sum
}

func (m *Manifest) chunkCount() int {
	n := len(m.Chunks)
	for _, d := range m.Deltas() {
		n += len(d.Chunks)
	}
	return n
}

// publishedAfter reports whether m was published after other: created later, or at the same
// instant with a higher version (versions restart at 1 when a filter is re-created, creation
// times do not go back).
func (m *Manifest) publishedAfter(other *Manifest) bool {
	switch c := m.created.Compare(other.created); {
	case c > 0:
		return true
	case c == 0:
		return m.Version > other.Version
	}
	return false
}

// deltasAfter returns the deltas that take a reader holding heldVersion (payload digest heldSHA)
// to this version, and false when the held snapshot is not in this chain.
func (m *Manifest) deltasAfter(heldVersion int64, heldSHA string) ([]Delta, bool) {
	if heldSHA == "" {
		return nil, false
	}
	if heldVersion == m.Version && strings.EqualFold(heldSHA, m.SHA256) {
		return nil, true
	}
	if m.Chain == nil {
		return nil, false
	}
	if heldVersion == m.Chain.BaseVersion && strings.EqualFold(heldSHA, m.Chain.BaseSHA256) {
		return m.Chain.Deltas, true
	}
	for i, d := range m.Chain.Deltas {
		if d.Version == heldVersion && strings.EqualFold(d.SHA256, heldSHA) {
			return m.Chain.Deltas[i+1:], true
		}
	}
	return nil, false
}

// ParseManifest parses and validates manifest.json. Strict about what is there (every field
// present and not null, integers where integers belong, nothing after the object), lenient about
// what is not ours (unknown fields are ignored, so newer writers may add some).
func ParseManifest(text string) (*Manifest, error) {
	if strings.TrimSpace(text) == "" {
		return nil, verification("manifest is empty")
	}
	var o object
	if err := o.parse([]byte(text), "$"); err != nil {
		if e, ok := err.(*Error); ok && strings.HasSuffix(e.msg, "is JSON null") {
			return nil, verification("manifest is JSON null")
		}
		return nil, err
	}
	m := &Manifest{}
	var err error
	get := func(f func() error) {
		if err == nil {
			err = f()
		}
	}
	get(func() (e error) { m.Format, e = o.str("format"); return })
	get(func() (e error) { m.Version, e = o.int64("version"); return })
	get(func() (e error) { m.FilterName, e = o.str("filterName"); return })
	get(func() error {
		s, e := o.str("keyType")
		if e != nil {
			return e
		}
		if s != string(KeyString) && s != string(KeyLong) {
			return verification(fmt.Sprintf("invalid manifest JSON at 'keyType': unknown key type '%s'", s))
		}
		m.KeyType = KeyType(s)
		return nil
	})
	get(func() (e error) { m.NumBits, e = o.int64("numBits"); return })
	get(func() (e error) {
		v, e := o.int32("numHashFunctions")
		m.NumHashFunctions = int(v)
		return e
	})
	get(func() (e error) { m.KeyCount, e = o.int64("keyCount"); return })
	get(func() (e error) { m.ExpectedFpp, e = o.float("expectedFpp"); return })
	get(func() (e error) { m.TotalBytes, e = o.int64("totalBytes"); return })
	get(func() (e error) { m.SHA256, e = o.str("sha256"); return })
	get(func() (e error) { m.CreatedAt, e = o.str("createdAt"); return })
	get(func() (e error) { m.Chunks, e = o.chunks("chunks"); return })
	get(func() error {
		raw, present := o.fields["chain"]
		if !present || isNull(raw) {
			return nil
		}
		var c object
		if e := c.parse(raw, "chain"); e != nil {
			return e
		}
		chain := &Chain{}
		var e error
		if chain.BaseVersion, e = c.int64("baseVersion"); e != nil {
			return e
		}
		if chain.BaseSHA256, e = c.str("baseSha256"); e != nil {
			return e
		}
		if chain.Deltas, e = c.deltas("deltas"); e != nil {
			return e
		}
		m.Chain = chain
		return nil
	})
	get(func() error {
		raw, present := o.fields["store"]
		if !present || isNull(raw) {
			return nil
		}
		var s string
		if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
			return verification("invalid manifest JSON at 'store': not a string")
		}
		m.Store, m.HasStore = s, true
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := m.validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// validate checks every field and their consistency (payload size = header + numBits/8 = sum of
// chunk sizes; a chain ends at this version).
func (m *Manifest) validate() error {
	fail := func(format string, args ...any) error {
		return verification(fmt.Sprintf("manifest of '%s' v%d: ", m.FilterName, m.Version) +
			fmt.Sprintf(format, args...))
	}
	layout, chainFormat, ok := layoutOf(m.Format)
	if !ok {
		return fail("format is '%s', this reader only understands '%s', '%s', '%s' and '%s'",
			m.Format, FormatGuava, FormatGuavaChain, FormatSplitBlock, FormatSplitBlockChain)
	}
	m.layout = layout
	if !validVersion(m.Version) {
		return fail("version must be in %d..%d, got %d", minVersion, maxVersion, m.Version)
	}
	if strings.TrimSpace(m.FilterName) == "" {
		return fail("filterName is missing")
	}
	if m.NumBits <= 0 || m.NumBits%64 != 0 || m.NumBits > maxBits {
		return fail("numBits must be a positive multiple of 64 up to %d, got %d", maxBits, m.NumBits)
	}
	if m.NumHashFunctions < 1 || m.NumHashFunctions > maxHashFunctions {
		return fail("numHashFunctions must be in 1..255, got %d", m.NumHashFunctions)
	}
	if layout == LayoutSplitBlock && (m.NumHashFunctions != splitBlockK ||
		m.NumBits%(blockBytes*8) != 0 || m.NumBits/(blockBytes*8) > maxBlocks) {
		return fail("a split-block filter has numHashFunctions 8 and whole 256-bit blocks (at most %d), got %d and numBits %d",
			maxBlocks, m.NumHashFunctions, m.NumBits)
	}
	if m.KeyCount < 0 {
		return fail("keyCount must be >= 0, got %d", m.KeyCount)
	}
	if !(m.ExpectedFpp >= 0 && m.ExpectedFpp <= 1) {
		return fail("expectedFpp must be in [0, 1], got %v", m.ExpectedFpp)
	}
	if want := layout.headerBytes() + m.NumBits/8; m.TotalBytes != want {
		return fail("totalBytes is %d but numBits %d needs %d", m.TotalBytes, m.NumBits, want)
	}
	if !isHex64(m.SHA256) {
		return fail("sha256 must be 64 hex digits, got '%s'", m.SHA256)
	}
	created, ok := parseOffsetDateTime(m.CreatedAt)
	if !ok {
		return fail("createdAt '%s' is not an RFC 3339 timestamp", m.CreatedAt)
	}
	m.created = created
	sum, err := validateChunks(fail, "chunks", m.Chunks)
	if err != nil {
		return err
	}
	if sum != m.TotalBytes {
		return fail("chunk sizes add up to %d bytes but totalBytes is %d", sum, m.TotalBytes)
	}
	if m.HasStore && !isStoreName(m.Store) {
		return fail("store must be a DNS label (at most 63 characters of a-z, 0-9 and '-')")
	}
	if !chainFormat && m.Chain != nil {
		return fail("format '%s' has no chain", m.Format)
	}
	if !chainFormat {
		return nil
	}
	c := m.Chain
	if c == nil {
		return fail("format '%s' needs a chain", m.Format)
	}
	if c.BaseVersion < minVersion || c.BaseVersion >= m.Version {
		return fail("chain.baseVersion must be in %d..%d, got %d", minVersion, m.Version-1, c.BaseVersion)
	}
	if !isHex64(c.BaseSHA256) {
		return fail("chain.baseSha256 must be 64 hex digits, got '%s'", c.BaseSHA256)
	}
	if len(c.Deltas) == 0 {
		return fail("chain.deltas is missing or empty")
	}
	previous := c.BaseVersion
	for i, d := range c.Deltas {
		where := fmt.Sprintf("chain.deltas[%d]", i)
		if d.Version <= previous {
			return fail("%s.version must be above %d, got %d", where, previous, d.Version)
		}
		previous = d.Version
		if d.ChangedBits < 0 || d.ChangedBits > m.NumBits {
			return fail("%s.changedBits must be in 0..%d, got %d", where, m.NumBits, d.ChangedBits)
		}
		if !isHex64(d.SHA256) {
			return fail("%s.sha256 must be 64 hex digits, got '%s'", where, d.SHA256)
		}
		sum, err := validateChunks(fail, where+".chunks", d.Chunks)
		if err != nil {
			return err
		}
		if sum != d.Bytes {
			return fail("%s: chunk sizes add up to %d bytes but bytes is %d", where, sum, d.Bytes)
		}
	}
	last := c.Deltas[len(c.Deltas)-1]
	if last.Version != m.Version || !strings.EqualFold(last.SHA256, m.SHA256) {
		return fail("the last delta must produce this version (v%d, sha256 %s)", m.Version, m.SHA256)
	}
	return nil
}

func validateChunks(fail func(string, ...any) error, field string, refs []ChunkRef) (int64, error) {
	if len(refs) == 0 {
		return 0, fail("%s is missing or empty", field)
	}
	var sum int64
	for i, c := range refs {
		where := fmt.Sprintf("%s[%d]", field, i)
		if strings.TrimSpace(c.Name) == "" {
			return 0, fail("%s.name is missing", where)
		}
		if c.Bytes < 1 {
			return 0, fail("%s.bytes must be >= 1, got %d", where, c.Bytes)
		}
		if !isHex64(c.SHA256) {
			return 0, fail("%s.sha256 must be 64 hex digits, got '%s'", where, c.SHA256)
		}
		sum += int64(c.Bytes)
	}
	return sum, nil
}

func validVersion(v int64) bool { return v >= minVersion && v <= maxVersion }

// isHex64 accepts 64 ASCII hex digits of either case, as every SHA-256 field must be.
func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// isStoreName accepts a DNS label: 1..63 of a-z, 0-9 and '-', starting and ending alphanumeric.
func isStoreName(s string) bool {
	if len(s) < 1 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (c != '-' || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}

// ---------------------------------------------------------------- strict JSON binding

// object is one JSON object whose fields are bound one by one, each required and not null.
type object struct {
	fields map[string]json.RawMessage
	path   string
}

func (o *object) parse(raw []byte, path string) error {
	o.path = path
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return verification(fmt.Sprintf("invalid manifest JSON at '%s': is JSON null", path))
	}
	if path == "$" {
		if err := checkJacksonLimits(raw); err != nil {
			return verification("invalid manifest JSON: " + err.Error())
		}
	}
	if len(raw) == 0 || raw[0] != '{' {
		if path == "$" {
			return verification("manifest is not a JSON object")
		}
		return verification(fmt.Sprintf("invalid manifest JSON at '%s': not an object", path))
	}
	if err := json.Unmarshal(raw, &o.fields); err != nil {
		return verification("invalid manifest JSON: " + err.Error())
	}
	return nil
}

func (o *object) where(name string) string {
	if o.path == "$" {
		return name
	}
	return o.path + "." + name
}

func (o *object) required(name string) (json.RawMessage, error) {
	raw, ok := o.fields[name]
	if !ok {
		return nil, verification(fmt.Sprintf("invalid manifest JSON at '%s': missing", o.where(name)))
	}
	if isNull(raw) {
		return nil, verification(fmt.Sprintf("invalid manifest JSON at '%s': null", o.where(name)))
	}
	return raw, nil
}

func (o *object) str(name string) (string, error) {
	raw, err := o.required(name)
	if err != nil {
		return "", err
	}
	if raw[0] != '"' {
		// Jackson binds a number or boolean to a string field as the token's text.
		if c := raw[0]; c == '-' || c >= '0' && c <= '9' || c == 't' || c == 'f' {
			return string(raw), nil
		}
		return "", verification(fmt.Sprintf("invalid manifest JSON at '%s': not a string", o.where(name)))
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", verification(fmt.Sprintf("invalid manifest JSON at '%s': not a string", o.where(name)))
	}
	return s, nil
}

// integer accepts a JSON number without fraction or exponent that fits in bits bits: a fraction
// where an integer belongs is a broken manifest, not something to round.
func (o *object) integer(name string, bits int) (int64, error) {
	raw, err := o.required(name)
	if err != nil {
		return 0, err
	}
	var v int64
	if raw[0] == '"' {
		// Jackson coerces text to a number as Long.parseLong would, after trimming.
		var text string
		ok := json.Unmarshal(raw, &text) == nil
		if v, ok = parseJavaInteger(text, bits); ok {
			return v, nil
		}
		err = strconv.ErrSyntax
	} else {
		v, err = strconv.ParseInt(string(raw), 10, bits)
	}
	if err != nil {
		return 0, verification(fmt.Sprintf("invalid manifest JSON at '%s': not an integer of %d bits", o.where(name), bits))
	}
	return v, nil
}

func (o *object) int64(name string) (int64, error) { return o.integer(name, 64) }

func (o *object) int32(name string) (int32, error) {
	v, err := o.integer(name, 32)
	return int32(v), err
}

func (o *object) float(name string) (float64, error) {
	raw, err := o.required(name)
	if err != nil {
		return 0, err
	}
	var f float64
	if raw[0] == '"' {
		var text string
		if json.Unmarshal(raw, &text) == nil {
			if f, ok := parseJavaDouble(text); ok {
				return f, nil
			}
		}
		return 0, verification(fmt.Sprintf("invalid manifest JSON at '%s': not a number", o.where(name)))
	}
	if c := raw[0]; !(c == '-' || c >= '0' && c <= '9') || json.Unmarshal(raw, &f) != nil {
		return 0, verification(fmt.Sprintf("invalid manifest JSON at '%s': not a number", o.where(name)))
	}
	return f, nil
}

func (o *object) array(name string) ([]json.RawMessage, error) {
	raw, err := o.required(name)
	if err != nil {
		return nil, err
	}
	var items []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		return nil, verification(fmt.Sprintf("invalid manifest JSON at '%s': not an array", o.where(name)))
	}
	return items, nil
}

func (o *object) chunks(name string) ([]ChunkRef, error) {
	items, err := o.array(name)
	if err != nil {
		return nil, err
	}
	refs := make([]ChunkRef, len(items))
	for i, item := range items {
		where := fmt.Sprintf("%s[%d]", o.where(name), i)
		if isNull(item) {
			return nil, verification(fmt.Sprintf("manifest: %s is null", where))
		}
		var c object
		if err := c.parse(item, where); err != nil {
			return nil, err
		}
		if refs[i].Name, err = c.str("name"); err != nil {
			return nil, err
		}
		if refs[i].Bytes, err = c.int32("bytes"); err != nil {
			return nil, err
		}
		if refs[i].SHA256, err = c.str("sha256"); err != nil {
			return nil, err
		}
	}
	return refs, nil
}

func (o *object) deltas(name string) ([]Delta, error) {
	items, err := o.array(name)
	if err != nil {
		return nil, err
	}
	deltas := make([]Delta, len(items))
	for i, item := range items {
		where := fmt.Sprintf("%s[%d]", o.where(name), i)
		if isNull(item) {
			return nil, verification(fmt.Sprintf("manifest: %s is null", where))
		}
		var c object
		if err := c.parse(item, where); err != nil {
			return nil, err
		}
		d := &deltas[i]
		if d.Version, err = c.int64("version"); err != nil {
			return nil, err
		}
		if d.Bytes, err = c.int64("bytes"); err != nil {
			return nil, err
		}
		if d.ChangedBits, err = c.int64("changedBits"); err != nil {
			return nil, err
		}
		if d.SHA256, err = c.str("sha256"); err != nil {
			return nil, err
		}
		if d.Chunks, err = c.chunks("chunks"); err != nil {
			return nil, err
		}
	}
	return deltas, nil
}

func isNull(raw []byte) bool { return string(bytes.TrimSpace(raw)) == "null" }
