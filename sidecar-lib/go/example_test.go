package reader_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"bloomoperator.io/reader"
)

// A reader over the ConfigMaps of one test vector; in a pod, the getter GETs them from the API
// server and Sync runs on every watch event of the manifest ConfigMap.
func Example() {
	var c struct {
		Steps []struct {
			ConfigMaps []reader.ConfigMap `json:"configMaps"`
		} `json:"steps"`
	}
	data, err := os.ReadFile("../test-vectors/guava-string/case.json")
	if err != nil || json.Unmarshal(data, &c) != nil {
		fmt.Println("no test vectors")
		return
	}
	byName := map[string]*reader.ConfigMap{}
	for i := range c.Steps[0].ConfigMaps {
		cm := &c.Steps[0].ConfigMaps[i]
		byName[cm.Metadata.Name] = cm
	}
	getter := reader.ConfigMapGetterFunc(func(_ context.Context, namespace, name string) (*reader.ConfigMap, error) {
		if cm, ok := byName[name]; ok && cm.Metadata.Namespace == namespace {
			return cm, nil
		}
		return nil, fmt.Errorf("%s/%s: %w", namespace, name, reader.ErrNotFound)
	})

	r, err := reader.NewReader(reader.Config{
		Namespace: "vectors", Filter: "products", KeyType: reader.KeyString,
		Limits: reader.Limits{MaxTotalBytes: 1 << 20, MaxChunks: 100},
	}, getter)
	if err != nil {
		panic(err)
	}
	res := r.Sync(context.Background())
	fmt.Println(res.Outcome, r.Current().Version, r.Current().Format)
	fmt.Println(r.MightContain("naïve-中文-рус"), r.MightContain("product-45"))

	res = r.Sync(context.Background())
	fmt.Println(res.Outcome)
	// Output:
	// load 1 guava-bloomfilter-v1
	// true true
	// keep
}
