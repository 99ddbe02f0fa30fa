package metrics

import (
	"context"
	"errors"
	"os"
	"regexp"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"bloomoperator.io/reader"
)

// foreignOnly are the metrics of the Go and Python readers the Java reader has no counterpart of
// (docs/reader-protocol.md); the Python reader exports the same names.
var foreignOnly = map[string]bool{"bloomreader_watch_expirations_total": true}

// watched is a reader with a fixed count of watch expirations.
type watched struct {
	r       *reader.Reader
	expired int64
}

func (w watched) Reader() *reader.Reader  { return w.r }
func (w watched) WatchExpirations() int64 { return w.expired }

// The names are the Java reader's: every one exported here is in its catalogue
// (ReaderMetricNames.PROMETHEUS_NAMES, which the dashboard and alert rules are checked against).
func TestNamesAreTheJavaReadersAndCountersCount(t *testing.T) {
	catalogue, err := os.ReadFile("../../src/main/java/io/bloomoperator/watch/metrics/ReaderMetricNames.java")
	if err != nil {
		t.Fatal(err)
	}
	javaNames := map[string]bool{}
	for _, m := range regexp.MustCompile(`names\.put\(\w+, "(bloomreader_[a-z_]+)"\)`).FindAllSubmatch(catalogue, -1) {
		javaNames[string(m[1])] = true
	}
	if len(javaNames) < 10 {
		t.Fatalf("read %d names from the Java catalogue", len(javaNames))
	}

	down := errors.New("connection refused")
	r, err := reader.NewReader(reader.Config{Namespace: "shop", Filter: "ids", KeyType: reader.KeyString},
		reader.ConfigMapGetterFunc(func(context.Context, string, string) (*reader.ConfigMap, error) { return nil, down }))
	if err != nil {
		t.Fatal(err)
	}
	r.MightContain("a")
	r.MightContainInt64(7)
	r.Sync(context.Background())
	registry := prometheus.NewPedanticRegistry()
	registry.MustRegister(NewCollector().AddWatched(watched{r, 3}, "shop", "ids"))
	families, err := registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if !javaNames[f.GetName()] && !foreignOnly[f.GetName()] {
			t.Errorf("%s is not in the Java reader's catalogue", f.GetName())
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] != "shop" || labels["filter"] != "ids" {
				t.Fatalf("%s labels %v", f.GetName(), labels)
			}
			key := f.GetName()
			if reason, ok := labels["reason"]; ok {
				key += "{" + reason + "}"
			}
			got[key] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	for name, want := range map[string]float64{
		"bloomreader_snapshot_version": -1, "bloomreader_swaps_total": 0,
		"bloomreader_lookups_total": 2, "bloomreader_maybe_present_total": 2, // fail-open before a load
		"bloomreader_load_failures_total{api}": 1, "bloomreader_load_failures_total{rollback}": 0,
		"bloomreader_watch_expirations_total": 3,
	} {
		if v, ok := got[name]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", name, v, ok, want)
		}
	}
}
