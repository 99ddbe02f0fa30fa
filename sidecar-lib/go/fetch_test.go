package reader

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// concurrent is a ConfigMapGetter over c that counts the GETs under way at once (the most seen
// in peak) and waits delay in each, like a round trip to the API server.
type concurrent struct {
	c           *cluster
	delay       time.Duration
	active, all atomic.Int32
	peak        atomic.Int32
}

func (g *concurrent) GetConfigMap(ctx context.Context, namespace, name string) (*ConfigMap, error) {
	n := g.active.Add(1)
	defer g.active.Add(-1)
	g.all.Add(1)
	for p := g.peak.Load(); n > p && !g.peak.CompareAndSwap(p, n); p = g.peak.Load() {
	}
	if g.delay > 0 {
		select {
		case <-time.After(g.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.c.GetConfigMap(ctx, namespace, name)
}

// manyChunks publishes a Guava filter of 8,016 bytes as 81 chunks of 100 bytes.
func manyChunks(t *testing.T) *fixture {
	t.Helper()
	fx := setup(t, KeyString, true, nil)
	f := newTestFilter(KeyString, LayoutGuava, 64_000, 5)
	for i := 0; i < 3_000; i++ {
		f.put("k-" + strconv.Itoa(i))
	}
	fx.pub.announce(t, fx.pub.whole(1, f))
	if n := len(fx.pub.last.Chunks); n < 50 {
		t.Fatalf("%d chunks", n)
	}
	return fx
}

func TestParallelFetchGivesTheSamePayload(t *testing.T) {
	fx := manyChunks(t)
	// A delta on it, of several chunks too: applied in order from chunks fetched in parallel.
	next := fx.pub.lastBits.clone()
	for i := 0; i < 100; i++ {
		next.put("d-" + strconv.Itoa(i))
	}
	for _, parallel := range []int{1, 4, MaxFetchParallelism} {
		t.Run(strconv.Itoa(parallel), func(t *testing.T) {
			getter := &concurrent{c: fx.c, delay: time.Millisecond}
			cfg := fx.r.cfg
			cfg.FetchParallelism = parallel
			r, err := NewReader(cfg, getter)
			if err != nil {
				t.Fatal(err)
			}
			if res := r.Sync(context.Background()); res.Outcome != Loaded {
				t.Fatal(res.Err)
			}
			if got := payloadSHA256(r.Current().Filter); got != fx.pub.last.SHA256 {
				t.Fatalf("payload %s, manifest %s", got, fx.pub.last.SHA256)
			}
			// Never more at once than allowed; and at once when allowed (81 GETs of 1 ms each).
			if peak := int(getter.peak.Load()); peak > parallel || (parallel > 1 && peak < 2) {
				t.Fatalf("%d GETs at once with parallelism %d", peak, parallel)
			}
			if !r.MightContain("k-7") {
				t.Fatal("k-7 absent")
			}
		})
	}
	fx.pub.announce(t, fx.pub.delta(2, next))
	if n := len(fx.pub.last.Chain.Deltas[0].Chunks); n < 3 {
		t.Fatalf("delta of %d chunks", n)
	}
	fx.sync(t, Loaded, "")
	fx.sync(t, Kept, "") // v1 was not loaded by fx.r: it reads base and delta
	if got := payloadSHA256(fx.r.Current().Filter); got != fx.pub.last.SHA256 || !fx.r.MightContain("d-99") {
		t.Fatalf("chain payload %s, manifest %s", got, fx.pub.last.SHA256)
	}
}

func TestParallelFetchRefusesATamperedChunk(t *testing.T) {
	fx := manyChunks(t)
	name := ChunkName("ids", 1, 37)
	raw, _ := base64.StdEncoding.DecodeString(fx.c.maps[name].BinaryData[ChunkKey])
	raw[10] ^= 1 // the same size, another digest
	fx.c.maps[name].BinaryData[ChunkKey] = base64.StdEncoding.EncodeToString(raw)
	res := fx.sync(t, Refused, ReasonVerification)
	if !strings.Contains(res.Err.Error(), "chunk 37") || !strings.Contains(res.Err.Error(), "sha256 mismatch") {
		t.Fatal(res.Err)
	}
	if fx.r.Ready() {
		t.Fatal("serves a version with a tampered chunk")
	}
}

// The first failure cancels the fetches under way: none is left running, none waits for its
// round trip, and no further chunk is fetched.
func TestFirstFailureCancelsTheRest(t *testing.T) {
	fx := manyChunks(t)
	failing := ChunkName("ids", 1, 2)
	var active, calls atomic.Int32
	getter := ConfigMapGetterFunc(func(ctx context.Context, namespace, name string) (*ConfigMap, error) {
		if name == ManifestName("ids") {
			return fx.c.GetConfigMap(ctx, namespace, name)
		}
		calls.Add(1)
		active.Add(1)
		defer active.Add(-1)
		if name == failing {
			return nil, errors.New("connection reset")
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Minute):
			return fx.c.GetConfigMap(ctx, namespace, name)
		}
	})
	cfg := fx.r.cfg
	cfg.FetchParallelism = 8
	r, err := NewReader(cfg, getter)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res := r.Sync(context.Background())
	if res.Outcome != Refused || ReasonOf(res.Err) != ReasonAPI || !strings.Contains(res.Err.Error(), failing) {
		t.Fatalf("%v %v, want refused API naming %s", res.Outcome, res.Err, failing)
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Fatalf("took %s: the other fetches were not cancelled", elapsed)
	}
	if n := active.Load(); n != 0 {
		t.Fatalf("%d fetches still running after the load returned", n)
	}
	if n := calls.Load(); n > 8 {
		t.Fatalf("%d chunks fetched with 8 at once and chunk 2 failing", n)
	}
}

func TestFetchParallelismIsBounded(t *testing.T) {
	for _, n := range []int{-1, MaxFetchParallelism + 1} {
		if _, err := NewReader(Config{Namespace: ns, Filter: "ids", KeyType: KeyString, FetchParallelism: n}, newCluster(ns)); err == nil {
			t.Errorf("parallelism %d accepted", n)
		}
	}
}

// BenchmarkLoadChunks loads a 32 MiB filter of 32 chunks of 1 MiB (Base64 in ConfigMaps, as the
// API server sends them) through an in-process getter that waits a fixed round trip per GET, one
// chunk at a time and 4 at once.
func BenchmarkLoadChunks(b *testing.B) {
	c := newCluster(ns)
	p := &publisher{c: c, filter: "ids", chunkSize: MaxChunkBytes}
	f := newTestFilter(KeyString, LayoutGuava, 32*MaxChunkBytes*8-64, 7)
	for i := 0; i < 1_000_000; i++ {
		f.put("k-" + strconv.Itoa(i))
	}
	p.announce(b, p.whole(1, f))
	if n := len(p.last.Chunks); n != 32 {
		b.Fatalf("%d chunks", n)
	}
	b.ResetTimer()
	for _, delay := range []time.Duration{0, 5 * time.Millisecond} {
		for _, parallel := range []int{1, DefaultFetchParallelism} {
			b.Run("rtt="+delay.String()+"/parallel="+strconv.Itoa(parallel), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					r, err := NewReader(Config{Namespace: ns, Filter: "ids", KeyType: KeyString, FetchParallelism: parallel},
						&concurrent{c: c, delay: delay})
					if err != nil {
						b.Fatal(err)
					}
					if res := r.Sync(context.Background()); res.Outcome != Loaded {
						b.Fatal(res.Err)
					}
				}
			})
		}
	}
}
