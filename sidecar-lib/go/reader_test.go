package reader

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/spaolacci/murmur3"
)

const ns = "shop"

func TestMurmur3MatchesGuava(t *testing.T) {
	// Guava: Hashing.murmur3_128().hashString("The quick brown fox jumps over the lazy dog", UTF_8)
	// is 6c1b07bc7bbc4be347939ac4a93c437a (its asBytes: h1 then h2, little-endian).
	h1, h2 := murmur3.Sum128([]byte("The quick brown fox jumps over the lazy dog"))
	var b [16]byte
	for i := 0; i < 8; i++ {
		b[i] = byte(h1 >> (8 * i))
		b[8+i] = byte(h2 >> (8 * i))
	}
	if got := hex.EncodeToString(b[:]); got != "6c1b07bc7bbc4be347939ac4a93c437a" {
		t.Fatalf("murmur3_128 = %s", got)
	}
}

func TestXxh64MatchesJava(t *testing.T) {
	// The fixtures of SplitBlockBitsTest.
	for key, want := range map[string]uint64{"": 0xEF46DB3751D8E999, "a": 0xD24EC4F1A98C6E5B, "abc": 0x44BC2CF5AD770999} {
		if got := xxhash.Sum64String(key); got != want {
			t.Errorf("xxh64(%q) = %x, want %x", key, got, want)
		}
	}
}

func TestCanaryBucketFixtures(t *testing.T) {
	for pod, want := range map[string]int{"app-0": 5, "app-1": 65, "reader-7": 43} {
		if got := CanaryBucket(pod); got != want {
			t.Errorf("bucket(%s) = %d, want %d", pod, got, want)
		}
	}
	if InCanaryShare("", 100) || !InCanaryShare("app-0", 6) || InCanaryShare("app-0", 5) {
		t.Error("share membership")
	}
	for text, want := range map[string]int{"1": 1, "100": 100, "0": 0, "101": 0, "0100": 0, "+5": 0, "": 0, " 5": 0, "050": 50} {
		if got := canaryPercent(text); got != want {
			t.Errorf("canaryPercent(%q) = %d, want %d", text, got, want)
		}
	}
}

// The index of a big geometry (numBits > 2^31) follows Guava's long arithmetic exactly.
func TestGuavaIndexBeyond2To31Bits(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	mask := new(big.Int).SetUint64(1<<63 - 1)
	two64 := new(big.Int).Lsh(big.NewInt(1), 64)
	for _, numBits := range []uint64{1 << 31, 1<<31 + 64, 5_000_000_064, uint64(maxBits)} {
		for n := 0; n < 1000; n++ {
			h1, h2 := rnd.Uint64(), rnd.Uint64()
			got := guavaIndexes(h1, h2, numBits, 5)
			for i := range got {
				c := new(big.Int).Mul(big.NewInt(int64(i)), new(big.Int).SetUint64(h2))
				c.Add(c, new(big.Int).SetUint64(h1)).Mod(c, two64).And(c, mask)
				want := c.Mod(c, new(big.Int).SetUint64(numBits)).Uint64()
				if got[i] != want {
					t.Fatalf("numBits %d, h=(%x,%x), i=%d: %d, want %d", numBits, h1, h2, i, got[i], want)
				}
			}
		}
	}
	if got := splitBlockIndex(^uint64(0), maxBlocks); got != maxBlocks-1 {
		t.Fatalf("last block %d", got)
	}
}

func TestNames(t *testing.T) {
	if got := ChunkName("ids", 7, 0); got != "ids-bloom-v7-0" {
		t.Fatal(got)
	}
	if got := DeltaChunkName("ids", 8, 2); got != "ids-bloom-v8-d2" {
		t.Fatal(got)
	}
	long := strings.Repeat("a", 250)
	got := ManifestName(long)
	if len(got) > 253 || !strings.HasSuffix(got, "-"+shortHash(long)+".bloom") {
		t.Fatal(got)
	}
	chunk := ChunkName(long, 12, 3)
	if len(chunk) != 253 || !strings.HasSuffix(chunk, ".bloom-v12-3") {
		t.Fatal(chunk)
	}
	// A cut ends on a letter or digit.
	dotted := strings.Repeat("a", 220) + "." + strings.Repeat("b", 40)
	if cut := ChunkName(dotted, 1, 0); strings.Contains(cut, ".-") {
		t.Fatal(cut)
	}
}

type fixture struct {
	c   *cluster
	pub *publisher
	r   *Reader
}

func setup(t *testing.T, keyType KeyType, signed bool, mutate func(*Config)) *fixture {
	t.Helper()
	c := newCluster(ns)
	p := &publisher{c: c, filter: "ids", chunkSize: 100}
	cfg := Config{Namespace: ns, Filter: "ids", KeyType: keyType, Limits: Limits{MaxTotalBytes: 1 << 20, MaxChunks: 100}}
	if signed {
		p.key = newKey(t, 1)
		keys, err := ParseTrustedKeys(publicPEM(t, p.key))
		if err != nil {
			t.Fatal(err)
		}
		cfg.TrustedKeys = keys
	}
	if mutate != nil {
		mutate(&cfg)
	}
	r, err := NewReader(cfg, c)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{c: c, pub: p, r: r}
}

func (f *fixture) sync(t *testing.T, want Outcome, reason Reason) Result {
	t.Helper()
	res := f.r.Sync(context.Background())
	if res.Outcome != want || ReasonOf(res.Err) != reason {
		t.Fatalf("outcome %v (%v), want %v %s", res.Outcome, res.Err, want, reason)
	}
	return res
}

func keysFilter(layout Layout, keys ...string) testFilter {
	k := 5
	if layout == LayoutSplitBlock {
		k = 8
	}
	f := newTestFilter(KeyString, layout, 2048, k)
	for _, key := range keys {
		f.put(key)
	}
	return f
}

func TestLoadsWholeAndChainInBothLayouts(t *testing.T) {
	for _, layout := range []Layout{LayoutGuava, LayoutSplitBlock} {
		t.Run(layout.String(), func(t *testing.T) {
			fx := setup(t, KeyString, true, nil)
			fx.pub.announce(t, fx.pub.whole(1, keysFilter(layout, "a", "b", "c")))
			fx.sync(t, Loaded, "")
			s := fx.r.Current()
			if s.Version != 1 || !s.Filter.MightContain("a") || !s.Filter.MightContain("c") {
				t.Fatalf("v1: %+v", s)
			}
			fx.sync(t, Kept, "")

			fx.pub.delta(2, keysFilter(layout, "a", "b", "c", "d"))
			fx.pub.announce(t, fx.pub.delta(3, keysFilter(layout, "b", "c", "d", "e")))
			fx.c.gets = nil
			fx.sync(t, Loaded, "")
			// Holding v1 (the base), the reader fetches only the deltas.
			for _, name := range fx.c.gets[1:] {
				if !strings.Contains(name, "-d") {
					t.Fatalf("fetched %s holding the base", name)
				}
			}
			if got := fx.r.Current(); got.Version != 3 || !got.Filter.MightContain("e") || !got.Filter.MightContain("d") {
				t.Fatalf("v3: %+v", got)
			}
			if s.Filter.MightContain("e") && s.Filter.MightContain("d") {
				t.Fatal("the served bits changed under the reader")
			}

			// A reader starting cold reads the base and the whole chain.
			cold, _ := NewReader(fx.r.cfg, fx.c)
			if res := cold.Sync(context.Background()); res.Outcome != Loaded {
				t.Fatal(res.Err)
			}
			if payloadSHA256(cold.Current().Filter) != fx.pub.last.SHA256 {
				t.Fatal("cold chain digest")
			}
		})
	}
}

func TestLongKeys(t *testing.T) {
	for _, layout := range []Layout{LayoutGuava, LayoutSplitBlock} {
		fx := setup(t, KeyLong, false, nil)
		k := 3
		if layout == LayoutSplitBlock {
			k = 8
		}
		f := newTestFilter(KeyLong, layout, 4096, k)
		for _, v := range []int64{0, -1, 1 << 62, -9_000_000_000} {
			f.putInt64(v)
		}
		fx.pub.announce(t, fx.pub.whole(1, f))
		fx.sync(t, Loaded, "")
		got := make([]bool, 4)
		fx.r.Current().Filter.MightContainInt64Batch([]int64{0, -1, 1 << 62, -9_000_000_000}, got)
		for i, ok := range got {
			if !ok {
				t.Fatalf("%v: key %d absent", layout, i)
			}
		}
	}
}

func TestRefusals(t *testing.T) {
	edit := func(mutate func(m *jsonManifest)) func(*fixture) {
		return func(fx *fixture) {
			m := fx.pub.whole(1, keysFilter(LayoutGuava, "a"))
			mutate(m)
			fx.pub.announce(t, m)
		}
	}
	cases := []struct {
		name   string
		signed bool
		cfg    func(*Config)
		act    func(*fixture)
		reason Reason
	}{
		{"wrong filter", false, nil, edit(func(m *jsonManifest) { m.FilterName = "other" }), ReasonWrongFilter},
		{"foreign chunk", false, nil, edit(func(m *jsonManifest) { m.Chunks[1].Name = "secrets" }), ReasonForeignChunk},
		{"too large", false, func(c *Config) { c.Limits.MaxTotalBytes = 100 }, edit(func(*jsonManifest) {}), ReasonTooLarge},
		{"too many chunks", false, func(c *Config) { c.Limits.MaxChunks = 2 }, edit(func(*jsonManifest) {}), ReasonTooLarge},
		{"key type", false, func(c *Config) { c.KeyType = KeyLong }, edit(func(*jsonManifest) {}), ReasonVerification},
		{"unknown format", false, nil, edit(func(m *jsonManifest) { m.Format = "guava-bloomfilter-v2" }), ReasonVerification},
		{"store", false, nil, edit(func(m *jsonManifest) { m.Store = "s3" }), ReasonUnknownStore},
		{"chunk digest", false, nil, edit(func(m *jsonManifest) { m.Chunks[0].SHA256 = strings.Repeat("0", 64) }), ReasonVerification},
		{"unsigned", true, nil, func(fx *fixture) {
			fx.pub.key = nil
			fx.pub.announce(t, fx.pub.whole(1, keysFilter(LayoutGuava, "a")))
		}, ReasonUnsigned},
		{"untrusted key", true, nil, func(fx *fixture) {
			fx.pub.key = newKey(t, 2)
			fx.pub.announce(t, fx.pub.whole(1, keysFilter(LayoutGuava, "a")))
		}, ReasonUntrustedKey},
		{"edited after signing", true, nil, func(fx *fixture) {
			fx.pub.announce(t, fx.pub.whole(1, keysFilter(LayoutGuava, "a")))
			cm := fx.c.maps[ManifestName("ids")]
			cm.Data[ManifestKey] = strings.Replace(cm.Data[ManifestKey], `"keyCount": 3`, `"keyCount": 4`, 1)
		}, ReasonBadSignature},
		{"other namespace", true, nil, func(fx *fixture) {
			fx.pub.c.namespace = "elsewhere"
			text := fx.pub.announce(t, fx.pub.whole(1, keysFilter(LayoutGuava, "a")))
			fx.pub.c.namespace = ns
			_ = text
		}, ReasonBadSignature},
		{"missing chunk", false, nil, func(fx *fixture) {
			fx.pub.announce(t, fx.pub.whole(1, keysFilter(LayoutGuava, "a")))
			delete(fx.c.maps, ChunkName("ids", 1, 1))
		}, ReasonVerification},
		{"base64 longer than announced", false, nil, func(fx *fixture) {
			fx.pub.announce(t, fx.pub.whole(1, keysFilter(LayoutGuava, "a")))
			cm := fx.c.maps[ChunkName("ids", 1, 0)]
			cm.BinaryData[ChunkKey] += "AAAA"
		}, ReasonChunk},
		{"no binaryData", false, nil, func(fx *fixture) {
			fx.pub.announce(t, fx.pub.whole(1, keysFilter(LayoutGuava, "a")))
			fx.c.maps[ChunkName("ids", 1, 0)].BinaryData = nil
		}, ReasonChunk},
		{"header", false, nil, func(fx *fixture) {
			m := fx.pub.whole(1, keysFilter(LayoutGuava, "a"))
			// Rewrite chunk 0 with another k in the header, digests consistent.
			f := keysFilter(LayoutGuava, "a")
			f.k = 6
			payload := f.payload()
			refs := fx.c.writeChunks(payload, 100, func(i int) string { return ChunkName("ids", 1, i) })
			m.Chunks, m.SHA256 = refs, sha(payload)
			fx.pub.announce(t, m)
		}, ReasonVerification},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fx := setup(t, KeyString, tc.signed, tc.cfg)
			tc.act(fx)
			fx.sync(t, Refused, tc.reason)
			if fx.r.Current() != nil {
				t.Fatal("served a refused snapshot")
			}
		})
	}
}

func TestRollbackOnlyWithTrustedKeys(t *testing.T) {
	for _, signed := range []bool{true, false} {
		fx := setup(t, KeyString, signed, nil)
		old := fx.pub.whole(1, keysFilter(LayoutGuava, "a"))
		fx.pub.announce(t, fx.pub.whole(2, keysFilter(LayoutGuava, "b")))
		fx.sync(t, Loaded, "")
		fx.pub.announce(t, old)
		if signed {
			fx.sync(t, Refused, ReasonRollback)
			if fx.r.Current().Version != 2 {
				t.Fatal("rollback replaced the served version")
			}
		} else {
			fx.sync(t, Loaded, "")
		}
	}
	// A re-created filter's version 1 is published later: it loads.
	fx := setup(t, KeyString, true, nil)
	fx.pub.announce(t, fx.pub.whole(5, keysFilter(LayoutGuava, "a")))
	fx.sync(t, Loaded, "")
	fx.pub.announce(t, fx.pub.whole(1, keysFilter(LayoutGuava, "z")))
	fx.sync(t, Loaded, "")
}

func TestTooOld(t *testing.T) {
	now := time.Date(2026, 12, 2, 23, 30, 0, 0, time.UTC)
	fx := setup(t, KeyString, true, func(c *Config) {
		c.MaxManifestAge = time.Hour
		c.Now = func() time.Time { return now }
	})
	fx.pub.announce(t, fx.pub.whole(1, keysFilter(LayoutGuava, "a")))
	fx.sync(t, Refused, ReasonTooOld)
}

func TestCanary(t *testing.T) {
	for pod, want := range map[string]int64{"app-0": 2, "app-1": 1} {
		fx := setup(t, KeyString, true, func(c *Config) { c.PodName = pod })
		fx.pub.announce(t, fx.pub.whole(1, keysFilter(LayoutGuava, "a")))
		canary := fx.pub.whole(2, keysFilter(LayoutGuava, "b"))
		text, _ := json.Marshal(canary)
		cm := fx.c.maps[ManifestName("ids")]
		cm.Data[CanaryManifestKey] = string(text)
		cm.Data[CanarySignatureKey] = fx.pub.sign(string(text))
		cm.Data[CanaryPercentKey] = "10" // app-0 (bucket 5) is in, app-1 (65) is not
		fx.sync(t, Loaded, "")
		if got := fx.r.Current().Version; got != want {
			t.Fatalf("%s serves v%d, want v%d", pod, got, want)
		}
		// A canary this reader may not load: it follows the stable manifest and says why.
		cm.Data[CanarySignatureKey] = strings.Replace(cm.Data[CanarySignatureKey], `"signature":"`, `"signature":"AA`, 1)
		res := fx.r.Sync(context.Background())
		if pod == "app-0" && (ReasonOf(res.CanaryErr) != ReasonBadSignature || res.Outcome != Refused || ReasonOf(res.Err) != ReasonRollback) {
			t.Fatalf("%s: %+v", pod, res)
		}
	}
}

func TestManifestParsing(t *testing.T) {
	fx := setup(t, KeyString, false, nil)
	m := fx.pub.whole(1, keysFilter(LayoutGuava, "a"))
	good, _ := json.Marshal(m)
	if _, err := ParseManifest(string(good)); err != nil {
		t.Fatal(err)
	}
	withField := func(name, value string) string {
		var o map[string]json.RawMessage
		_ = json.Unmarshal(good, &o)
		if value == "" {
			delete(o, name)
		} else {
			o[name] = json.RawMessage(value)
		}
		b, _ := json.Marshal(o)
		return string(b)
	}
	bad := map[string]string{
		"empty":           "  ",
		"null":            "null",
		"array":           "[]",
		"trailing":        string(good) + " {}",
		"missing version": withField("version", ""),
		"null sha":        withField("sha256", "null"),
		"fraction":        withField("numBits", "2048.0"),
		"version 0":       withField("version", "0"),
		"version 10^18":   withField("version", "1000000000000000000"),
		"key type":        withField("keyType", `"string"`),
		"created":         withField("createdAt", `"2026-02-30T00:00:00Z"`),
		"total":           withField("totalBytes", "100"),
		"store":           withField("store", "7"),
		"chain":           withField("chain", `{"baseVersion":1}`),
		"bytes overflow":  strings.Replace(string(good), `"bytes":100`, `"bytes":4294967396`, 1),
	}
	for name, text := range bad {
		if _, err := ParseManifest(text); ReasonOf(err) != ReasonVerification {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := ParseManifest(withField("extra", `{"x":1}`)); err != nil {
		t.Errorf("unknown fields are ignored: %v", err)
	}
	if _, err := ParseManifest(withField("chain", "null")); err != nil {
		t.Errorf("a null chain is no chain: %v", err)
	}
	for _, ts := range []string{"2026-12-02T22:00Z", "2026-12-02t22:00:00.123456789+01:00", "2024-02-29T00:00:00-05:30"} {
		if _, ok := parseOffsetDateTime(ts); !ok {
			t.Errorf("%s refused", ts)
		}
	}
	for _, ts := range []string{"2026-12-02 22:00:00Z", "2026-12-02T24:00:00Z", "2026-12-02T22:00:00", "2025-02-29T00:00:00Z"} {
		if _, ok := parseOffsetDateTime(ts); ok {
			t.Errorf("%s accepted", ts)
		}
	}
}

func TestSignatureBase64WithoutPadding(t *testing.T) {
	fx := setup(t, KeyString, true, nil)
	fx.pub.announce(t, fx.pub.whole(1, keysFilter(LayoutGuava, "a")))
	cm := fx.c.maps[ManifestName("ids")]
	var rec map[string]string
	_ = json.Unmarshal([]byte(cm.Data[SignatureKey]), &rec)
	raw, _ := base64.StdEncoding.DecodeString(rec["signature"])
	rec["signature"] = base64.RawStdEncoding.EncodeToString(raw)
	b, _ := json.Marshal(rec)
	cm.Data[SignatureKey] = string(b)
	fx.sync(t, Loaded, "")
}

// testdata/java-names.tsv: names the Java SnapshotNames writes for filter names long enough to be
// cut (filter, manifest, chunk v999999999999999999 #12345, delta chunk v7 #0).
func TestNamesMatchJavaForCutNames(t *testing.T) {
	data, err := os.ReadFile("testdata/java-names.tsv")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Split(line, "\t")
		got := []string{ManifestName(f[0]), ChunkName(f[0], maxVersion, 12345), DeltaChunkName(f[0], 7, 0)}
		if strings.Join(got, "\t") != strings.Join(f[1:], "\t") {
			t.Errorf("filter of %d chars: %q, want %q", len(f[0]), got, f[1:])
		}
	}
}

// testdata/java-created-at.tsv: createdAt texts with what Java's ISO_OFFSET_DATE_TIME makes of
// them ("refused", or epoch seconds.nanos): the instants that order publications (ROLLBACK).
func TestCreatedAtMatchesJava(t *testing.T) {
	data, err := os.ReadFile("testdata/java-created-at.tsv")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		f := strings.Split(line, "\t")
		got, ok := parseOffsetDateTime(f[0])
		if f[1] == "refused" {
			if ok {
				t.Errorf("%q accepted as %v, Java refuses it", f[0], got)
			}
			continue
		}
		sec, nanos, _ := strings.Cut(f[1], ".")
		wantSec, _ := strconv.ParseInt(sec, 10, 64)
		wantNanos, _ := strconv.Atoi(nanos)
		if !ok || got.Unix() != wantSec || got.Nanosecond() != wantNanos {
			t.Errorf("%q: %v (%v), Java: %s", f[0], got, ok, f[1])
		}
	}
}

func TestBeforeFirstSnapshot(t *testing.T) {
	for _, closed := range []bool{false, true} {
		fx := setup(t, KeyString, false, func(c *Config) { c.FailClosed = closed })
		if fx.r.Ready() || fx.r.MightContain("x") != !closed {
			t.Fatalf("FailClosed=%v: answered %v before the first snapshot", closed, fx.r.MightContain("x"))
		}
		fx.pub.announce(t, fx.pub.whole(1, keysFilter(LayoutGuava, "a")))
		fx.sync(t, Loaded, "")
		if !fx.r.Ready() || !fx.r.MightContain("a") {
			t.Fatal("the loaded filter forgot its key")
		}
	}
}

// Batch lookups through the Reader answer as the Filter's and count every key, as single lookups
// and the Java reader's mightContainAll do; before the first load they answer as MightContain.
func TestBatchLookupsAreCounted(t *testing.T) {
	for _, closed := range []bool{false, true} {
		fx := setup(t, KeyString, false, func(c *Config) { c.FailClosed = closed })
		got := make([]bool, 3)
		fx.r.MightContainBatch([]string{"a", "b", "c"}, got)
		for _, answer := range got {
			if answer != !closed {
				t.Fatalf("FailClosed=%v: batch answered %v before the first snapshot", closed, got)
			}
		}
		want := uint64(3)
		if closed {
			want = 0
		}
		if s := fx.r.Stats(); s.Lookups != 3 || s.MaybePresent != want {
			t.Fatalf("FailClosed=%v: %+v after a batch of 3 before the first snapshot", closed, s)
		}
	}
	fx := setup(t, KeyString, false, nil)
	fx.pub.announce(t, fx.pub.whole(1, keysFilter(LayoutGuava, "a", "b")))
	fx.sync(t, Loaded, "")
	keys := []string{"a", "b", "absent-1", "absent-2", "absent-3"}
	got := make([]bool, len(keys))
	fx.r.MightContainBatch(keys, got)
	present := uint64(0)
	for i, key := range keys {
		if single := fx.r.Current().Filter.MightContain(key); got[i] != single {
			t.Fatalf("%s: batch %v, single %v", key, got[i], single)
		}
		if got[i] {
			present++
		}
	}
	if s := fx.r.Stats(); s.Lookups != uint64(len(keys)) || s.MaybePresent != present || present < 2 {
		t.Fatalf("%+v after a batch of %d keys, %d maybe present", s, len(keys), present)
	}

	long := setup(t, KeyLong, false, nil)
	f := newTestFilter(KeyLong, LayoutSplitBlock, 4096, 8)
	f.putInt64(7)
	long.pub.announce(t, long.pub.whole(1, f))
	long.sync(t, Loaded, "")
	values := make([]bool, 2)
	long.r.MightContainInt64Batch([]int64{7, 8}, values)
	if !values[0] || long.r.Stats().Lookups != 2 {
		t.Fatalf("answers %v, %+v", values, long.r.Stats())
	}
}

// testdata/java-reports.tsv: reader report names and filter label values as the Java
// SnapshotNames writes them (filter, pod UID, report name, label value), cut names included: the
// operator counts a report only under exactly these.
func TestReaderReportNamesMatchJava(t *testing.T) {
	data, err := os.ReadFile("testdata/java-reports.tsv")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Split(line, "\t")
		if got := ReaderReportName(f[0], f[1]); got != f[2] {
			t.Errorf("report name of a filter of %d chars: %q, want %q", len(f[0]), got, f[2])
		}
		if got := FilterLabelValue(f[0]); got != f[3] {
			t.Errorf("label value of a filter of %d chars: %q, want %q", len(f[0]), got, f[3])
		}
	}
}
