package reader

import (
	"strconv"
	"testing"
)

// 1M keys at about 1 % (Guava: 9.6 bits per key, k = 7; split-block: 10.6 bits per key).
func benchFilter(b *testing.B, layout Layout) (testFilter, []string) {
	b.Helper()
	const n = 1_000_000
	numBits, k := int64(9_585_088), 7
	if layout == LayoutSplitBlock {
		numBits, k = 10_580_992, 8
	}
	f := newTestFilter(KeyString, layout, numBits, k)
	keys := make([]string, 4096)
	for i := 0; i < n; i++ {
		key := "product-" + strconv.Itoa(i)
		f.put(key)
		if i < len(keys) {
			keys[i] = "absent-" + strconv.Itoa(i)
		}
	}
	return f, keys
}

func BenchmarkMightContain(b *testing.B) {
	for _, layout := range []Layout{LayoutGuava, LayoutSplitBlock} {
		b.Run(layout.String(), func(b *testing.B) {
			f, keys := benchFilter(b, layout)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f.MightContain(keys[i&4095])
			}
		})
	}
}
