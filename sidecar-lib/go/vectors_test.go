package reader

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/spaolacci/murmur3"
)

// The language-neutral test vectors written by the Java generator (sidecar-lib/test-vectors,
// README.md there): every case listed in index.json is run, none is skipped. BLOOM_TEST_VECTORS
// overrides the directory.
func vectorsDir() string {
	if dir := os.Getenv("BLOOM_TEST_VECTORS"); dir != "" {
		return dir
	}
	return filepath.Join("..", "test-vectors")
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("test vectors: %v", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

type vectorCase struct {
	Name   string `json:"name"`
	Reader struct {
		Namespace   string   `json:"namespace"`
		Filter      string   `json:"filter"`
		KeyType     string   `json:"keyType"`
		PodName     string   `json:"podName"`
		TrustedKeys []string `json:"trustedKeys"`
		Limits      struct {
			MaxTotalBytes int64 `json:"maxTotalBytes"`
			MaxChunks     int   `json:"maxChunks"`
		} `json:"limits"`
	} `json:"reader"`
	Steps []struct {
		Note       string      `json:"note"`
		ConfigMaps []ConfigMap `json:"configMaps"`
		Expect     struct {
			Outcome string `json:"outcome"`
			Reason  string `json:"reason"`
			Served  *struct {
				Version          int64  `json:"version"`
				Format           string `json:"format"`
				SHA256           string `json:"sha256"`
				NumBits          int64  `json:"numBits"`
				NumHashFunctions int    `json:"numHashFunctions"`
			} `json:"served"`
			Probes []struct {
				Key     string `json:"key"`
				Present bool   `json:"present"`
			} `json:"probes"`
		} `json:"expect"`
	} `json:"steps"`
}

// stepMaps is a namespace's snapshot ConfigMaps at one moment: each step replaces the set.
type stepMaps map[string]*ConfigMap

func (s *stepMaps) GetConfigMap(_ context.Context, namespace, name string) (*ConfigMap, error) {
	cm, ok := (*s)[name]
	if !ok || cm.Metadata.Namespace != namespace {
		return nil, fmt.Errorf("configmaps %q: %w", name, ErrNotFound)
	}
	return cm, nil
}

func TestVectors(t *testing.T) {
	dir := vectorsDir()
	var index struct {
		VectorsVersion int      `json:"vectorsVersion"`
		Cases          []string `json:"cases"`
	}
	readJSON(t, filepath.Join(dir, "index.json"), &index)
	if len(index.Cases) == 0 {
		t.Fatal("index.json lists no case")
	}
	steps, probes := 0, 0
	for _, name := range index.Cases {
		var c vectorCase
		readJSON(t, filepath.Join(dir, name, "case.json"), &c)
		steps += len(c.Steps)
		for _, s := range c.Steps {
			probes += len(s.Expect.Probes)
		}
		t.Run(name, func(t *testing.T) { runCase(t, &c) })
	}
	t.Logf("%d cases, %d steps, %d probes", len(index.Cases), steps, probes)
}

func runCase(t *testing.T, c *vectorCase) {
	keys, err := ParseTrustedKeys(c.Reader.TrustedKeys...)
	if err != nil {
		t.Fatal(err)
	}
	maps := stepMaps{}
	r, err := NewReader(Config{
		Namespace: c.Reader.Namespace, Filter: c.Reader.Filter, KeyType: KeyType(c.Reader.KeyType),
		PodName: c.Reader.PodName, TrustedKeys: keys,
		Limits: Limits{MaxTotalBytes: c.Reader.Limits.MaxTotalBytes, MaxChunks: c.Reader.Limits.MaxChunks},
	}, &maps)
	if err != nil {
		t.Fatal(err)
	}
	for i, step := range c.Steps {
		maps = stepMaps{}
		for j := range step.ConfigMaps {
			cm := &step.ConfigMaps[j]
			maps[cm.Metadata.Name] = cm
		}
		res := r.Sync(context.Background())
		where := fmt.Sprintf("step %d (%s)", i, step.Note)
		want := step.Expect
		if got := res.Outcome.String(); got != want.Outcome {
			t.Fatalf("%s: outcome %s (%v), want %s %s", where, got, res.Err, want.Outcome, want.Reason)
		}
		if got := string(ReasonOf(res.Err)); got != want.Reason {
			t.Fatalf("%s: reason %q (%v), want %q", where, got, res.Err, want.Reason)
		}
		s := r.Current()
		if want.Served == nil {
			if s != nil {
				t.Fatalf("%s: serves v%d, want nothing", where, s.Version)
			}
			continue
		}
		if s == nil {
			t.Fatalf("%s: serves nothing, want v%d", where, want.Served.Version)
		}
		if s.Version != want.Served.Version || s.Format != want.Served.Format || s.SHA256 != want.Served.SHA256 ||
			s.Filter.NumBits() != want.Served.NumBits || s.Filter.NumHashFunctions() != want.Served.NumHashFunctions {
			t.Fatalf("%s: serves v%d %s %s %d bits k=%d, want %+v", where, s.Version, s.Format, s.SHA256,
				s.Filter.NumBits(), s.Filter.NumHashFunctions(), *want.Served)
		}
		if got := payloadSHA256(s.Filter); got != want.Served.SHA256 {
			t.Fatalf("%s: the served bits digest to %s, want %s", where, got, want.Served.SHA256)
		}
		wrong := 0
		for _, p := range want.Probes {
			var got bool
			if s.Filter.KeyType() == KeyLong {
				v, err := strconv.ParseInt(p.Key, 10, 64)
				if err != nil {
					t.Fatalf("%s: Long probe %q: %v", where, p.Key, err)
				}
				got = s.Filter.MightContainInt64(v)
			} else {
				got = s.Filter.MightContain(p.Key)
			}
			if got != p.Present {
				wrong++
				t.Errorf("%s: probe %q = %v, want %v", where, p.Key, got, p.Present)
			}
		}
		if wrong > 0 {
			t.FailNow()
		}
	}
}

// hashes.json: per-key hashes and the bit (block) indexes they select in geometries above 2^31
// bits, which no vector payload can carry.
func TestVectorHashes(t *testing.T) {
	type key struct {
		KeyType    string   `json:"keyType"`
		Key        string   `json:"key"`
		H1         string   `json:"murmur3H1"`
		H2         string   `json:"murmur3H2"`
		BitIndexes []uint64 `json:"bitIndexes"`
		Xxh64      string   `json:"xxh64"`
		Block      uint64   `json:"block"`
		BitInWord  []uint32 `json:"bitInWord"`
	}
	var h struct {
		Guava struct {
			NumBits          uint64 `json:"numBits"`
			NumHashFunctions int    `json:"numHashFunctions"`
			Keys             []key  `json:"keys"`
		} `json:"guava"`
		SplitBlock struct {
			NumBlocks uint64 `json:"numBlocks"`
			NumBits   uint64 `json:"numBits"`
			Keys      []key  `json:"keys"`
		} `json:"splitBlock"`
	}
	readJSON(t, filepath.Join(vectorsDir(), "hashes.json"), &h)
	keyBytes := func(k key) []byte {
		if k.KeyType == "Long" {
			v, err := strconv.ParseInt(k.Key, 10, 64)
			if err != nil {
				t.Fatalf("Long key %q: %v", k.Key, err)
			}
			return binary.LittleEndian.AppendUint64(nil, uint64(v))
		}
		return []byte(k.Key)
	}
	if h.Guava.NumBits <= 1<<31 || len(h.Guava.Keys) == 0 || h.SplitBlock.NumBits <= 1<<31 || len(h.SplitBlock.Keys) == 0 {
		t.Fatalf("hashes.json holds no big geometry: %d / %d bits", h.Guava.NumBits, h.SplitBlock.NumBits)
	}
	for _, k := range h.Guava.Keys {
		h1, h2 := murmur3.Sum128(keyBytes(k))
		if got := fmt.Sprintf("%016x/%016x", h1, h2); got != k.H1+"/"+k.H2 {
			t.Errorf("murmur3(%s %q) = %s, want %s/%s", k.KeyType, k.Key, got, k.H1, k.H2)
		}
		if got := guavaIndexes(h1, h2, h.Guava.NumBits, h.Guava.NumHashFunctions); fmt.Sprint(got) != fmt.Sprint(k.BitIndexes) {
			t.Errorf("bit indexes of %s %q = %v, want %v", k.KeyType, k.Key, got, k.BitIndexes)
		}
	}
	if h.SplitBlock.NumBits != h.SplitBlock.NumBlocks*256 {
		t.Fatalf("split-block geometry %d blocks, %d bits", h.SplitBlock.NumBlocks, h.SplitBlock.NumBits)
	}
	for _, k := range h.SplitBlock.Keys {
		hash := xxhash.Sum64(keyBytes(k))
		if got := fmt.Sprintf("%016x", hash); got != k.Xxh64 {
			t.Errorf("xxh64(%s %q) = %s, want %s", k.KeyType, k.Key, got, k.Xxh64)
		}
		if got := splitBlockIndex(hash, h.SplitBlock.NumBlocks); got != k.Block {
			t.Errorf("block of %s %q = %d, want %d", k.KeyType, k.Key, got, k.Block)
		}
		bits := make([]uint32, 8)
		for i, salt := range splitBlockSalts {
			bits[i] = (uint32(hash) * salt) >> 27
		}
		if fmt.Sprint(bits) != fmt.Sprint(k.BitInWord) {
			t.Errorf("bits of %s %q = %v, want %v", k.KeyType, k.Key, bits, k.BitInWord)
		}
	}
}
