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

// 10M keys at about 1 %: 12 MB of bits, beyond the caches, where lookups wait for memory.
func BenchmarkBatchLarge(b *testing.B) {
	for _, layout := range []Layout{LayoutGuava, LayoutSplitBlock} {
		numBits, k := int64(95_850_624), 7
		if layout == LayoutSplitBlock {
			numBits, k = 105_809_920, 8
		}
		f := newTestFilter(KeyString, layout, numBits, k)
		for i := 0; i < 10_000_000; i++ {
			f.put("product-" + strconv.Itoa(i))
		}
		keys := make([]string, 1024)
		for i := range keys {
			keys[i] = "product-" + strconv.Itoa(i*9_973)
		}
		results := make([]bool, len(keys))
		b.Run(layout.String()+"/single", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				for j, key := range keys {
					results[j] = f.MightContain(key)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/key")
		})
		b.Run(layout.String()+"/batch", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				f.MightContainBatch(keys, results)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/key")
		})
	}
}
