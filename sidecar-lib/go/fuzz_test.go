package reader

import (
	"encoding/json"
	"testing"
)

// Whatever a ConfigMap writer puts into a manifest, parsing ends in a manifest or an error with a
// reason, never a panic.
func FuzzParseManifest(f *testing.F) {
	fx := &publisher{c: newCluster(ns), filter: "ids", chunkSize: 64}
	whole := fx.whole(1, keysFilter(LayoutGuava, "a"))
	chain := fx.delta(2, keysFilter(LayoutGuava, "a", "b"))
	for _, m := range []*jsonManifest{whole, chain} {
		text, _ := json.Marshal(m)
		f.Add(string(text))
	}
	f.Add(`{"chain":{"deltas":[null]}}`)
	f.Fuzz(func(t *testing.T, text string) {
		m, err := ParseManifest(text)
		if err != nil && ReasonOf(err) != ReasonVerification {
			t.Fatalf("reason %s", ReasonOf(err))
		}
		if err == nil {
			_ = Limits{MaxTotalBytes: 1 << 20, MaxChunks: 100}.check(m, "ids")
		}
	})
}

// A delta consistent with its own digest but otherwise hostile is refused, never a panic or a
// write outside the filter.
func FuzzDelta(f *testing.F) {
	f.Add(append(deltaHeader(3, 2, 2), 0, 126), int64(2))
	f.Add(append(deltaHeader(3, 2, 1), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), int64(1))
	base := newTestFilter(KeyString, LayoutGuava, 128, 3)
	f.Fuzz(func(t *testing.T, data []byte, changed int64) {
		if len(data) == 0 {
			return
		}
		if err := applyRaw(base, data, changed); err != nil && ReasonOf(err) != ReasonVerification {
			t.Fatalf("reason %s", ReasonOf(err))
		}
	})
}
