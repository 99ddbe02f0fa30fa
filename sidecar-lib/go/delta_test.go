package reader

import (
	"context"
	"encoding/binary"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// applyRaw applies one delta held in a single chunk to a copy of f.
func applyRaw(f testFilter, data []byte, changed int64) error {
	ref := ChunkRef{Name: "d", Bytes: int32(len(data)), SHA256: sha(data)}
	d := &Delta{Version: 2, Bytes: int64(len(data)), ChangedBits: changed, Chunks: []ChunkRef{ref}}
	src := func(context.Context, ChunkRef) ([]byte, error) { return data, nil }
	return applyDelta(context.Background(), f.clone().Filter, d, src, DefaultFetchParallelism)
}

func deltaHeader(k int, numLongs uint32, count uint64) []byte {
	h := make([]byte, deltaHeaderBytes)
	h[0], h[1] = deltaBitPositions, byte(k)
	binary.BigEndian.PutUint32(h[2:], numLongs)
	binary.BigEndian.PutUint64(h[6:], count)
	return h
}

func TestDeltaRefusesMalformedEncodings(t *testing.T) {
	f := newTestFilter(KeyString, LayoutGuava, 128, 3) // 2 words
	cases := map[string]struct {
		data    []byte
		changed int64
		want    string
	}{
		"ok":              {append(deltaHeader(3, 2, 2), 0, 126), 2, ""},
		"encoding":        {append([]byte{2}, deltaHeader(3, 2, 0)[1:]...), 0, "delta encoding is 2"},
		"k":               {deltaHeader(4, 2, 0), 0, "k=4"},
		"words":           {deltaHeader(3, 3, 0), 0, "3 words"},
		"count":           {deltaHeader(3, 2, 1), 0, "says 1 changed bits"},
		"beyond":          {append(deltaHeader(3, 2, 2), 0, 127), 2, "beyond"},
		"after last":      {append(deltaHeader(3, 2, 1), 0, 0), 1, "bytes after the last"},
		"short header":    {deltaHeader(3, 2, 0)[:10], 0, "inside its 14-byte header"},
		"missing":         {append(deltaHeader(3, 2, 2), 5), 2, "1 of its 2 bit positions missing"},
		"open varint":     {append(deltaHeader(3, 2, 1), 0x80), 1, "missing"},
		"varint overflow": {append(deltaHeader(3, 2, 1), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02), 1, "overflows"},
		"negative gap":    {append(deltaHeader(3, 2, 1), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), 1, "beyond"},
		"11-byte varint":  {append(deltaHeader(3, 2, 1), 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00), 1, "longer than 10 bytes"},
	}
	for name, tc := range cases {
		err := applyRaw(f, tc.data, tc.changed)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if err == nil || ReasonOf(err) != ReasonVerification || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want VERIFICATION %q", name, err, tc.want)
		}
	}
}

func TestSignatureRecords(t *testing.T) {
	fx := setup(t, KeyString, true, nil)
	text := fx.pub.announce(t, fx.pub.whole(1, keysFilter(LayoutGuava, "a")))
	good := fx.c.maps[ManifestName("ids")].Data[SignatureKey]
	keys := fx.r.cfg.TrustedKeys
	if err := keys.verify(ns, text, good, true); err != nil {
		t.Fatal(err)
	}
	for name, sig := range map[string]string{
		"not json":      "{",
		"array":         "[]",
		"algorithm":     strings.Replace(good, "Ed25519", "RSA", 1),
		"no signature":  `{"algorithm":"Ed25519","keyId":"` + keys.KeyIDs()[0] + `"}`,
		"null keyId":    `{"algorithm":"Ed25519","keyId":null,"signature":"AA=="}`,
		"trailing":      good + "x",
		"not base64":    strings.Replace(good, `"signature":"`, `"signature":"!`, 1),
		"line breaks":   strings.Replace(good, `"signature":"`, `"signature":"\n`, 1),
		"short":         `{"algorithm":"Ed25519","keyId":"` + keys.KeyIDs()[0] + `","signature":"AAAA"}`,
		"other context": fx.pub.sign(text + " "),
	} {
		if err := keys.verify(ns, text, sig, true); ReasonOf(err) != ReasonBadSignature {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := ParseTrustedKeys("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"); err == nil {
		t.Error("accepted a malformed key")
	}
}

// Lookups never see a half-loaded filter: every answer comes from one whole version.
func TestSwapIsAtomicForConcurrentLookups(t *testing.T) {
	fx := setup(t, KeyString, false, nil)
	fx.pub.announce(t, fx.pub.whole(1, keysFilter(LayoutGuava, "a")))
	fx.sync(t, Loaded, "")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results := make([]bool, 2)
			for {
				select {
				case <-stop:
					return
				default:
				}
				s := fx.r.Current()
				s.Filter.MightContainBatch([]string{"b", "a"}, results)
				// v odd holds "a", v even holds "b": a filter never forgets its own keys.
				if !results[s.Version%2] {
					t.Errorf("v%d answered %v", s.Version, results)
					return
				}
			}
		}()
	}
	for v := int64(2); v < 40; v++ {
		key := "a"
		if v%2 == 0 {
			key = "b"
		}
		fx.pub.announce(t, fx.pub.whole(v, keysFilter(LayoutGuava, key)))
		fx.sync(t, Loaded, "")
	}
	close(stop)
	wg.Wait()
}

func TestWrongKeyTypePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("a Long lookup on a String filter answered")
		}
	}()
	keysFilter(LayoutGuava, "a").MightContainInt64(1)
}

// The batch lookups answer exactly as the single ones, present and absent keys alike.
func TestBatchEqualsSingle(t *testing.T) {
	for _, layout := range []Layout{LayoutGuava, LayoutSplitBlock} {
		k := 4
		if layout == LayoutSplitBlock {
			k = 8
		}
		strs := newTestFilter(KeyString, layout, 4096, k)
		longs := newTestFilter(KeyLong, layout, 4096, k)
		var keys []string
		var values []int64
		for i := 0; i < 1000; i++ {
			keys = append(keys, "k"+strconv.Itoa(i))
			values = append(values, int64(i)*7919-3_000_000)
			if i%3 == 0 {
				strs.put(keys[i])
				longs.putInt64(values[i])
			}
		}
		got := make([]bool, len(keys))
		strs.MightContainBatch(keys, got)
		for i, key := range keys {
			if got[i] != strs.MightContain(key) || i%3 == 0 && !got[i] {
				t.Fatalf("%v: %q batch %v", layout, key, got[i])
			}
		}
		longs.MightContainInt64Batch(values, got)
		for i, v := range values {
			if got[i] != longs.MightContainInt64(v) || i%3 == 0 && !got[i] {
				t.Fatalf("%v: %d batch %v", layout, v, got[i])
			}
		}
	}
}
