package metrics

import (
	"context"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"bloomoperator.io/reader"
)

// foreignOnly are the metrics of the Go and Python readers the Java reader has no counterpart of
// (docs/reader-protocol.md); the Python reader exports the same names.
var foreignOnly = map[string]bool{"bloomreader_watch_expirations_total": true}

// notExported are the Java reader's metrics of features the Go and Python readers do not have
// (observed false positives, local adds, in-place deltas); every other Java metric is exported
// under the same name and labels. A metric the Java catalogue gains must be added to one side.
var notExported = map[string]bool{
	"bloomreader_fpp_observed":                     true, // recordOutcome
	"bloomreader_outcomes_total":                   true, // recordOutcome
	"bloomreader_local_adds":                       true, // addLocal
	"bloomreader_local_adds_refused_total":         true,
	"bloomreader_local_adds_expired_total":         true,
	"bloomreader_local_adds_arrived_total":         true,
	"bloomreader_deltas_in_place_total":            true, // deltas applied in place
	"bloomreader_in_place_digest_mismatches_total": true,
}

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
	gathered, err := registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	families := map[string]bool{}
	for _, f := range gathered {
		families[f.GetName()] = true
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
	for name := range javaNames {
		if _, exported := families[name]; exported == notExported[name] {
			t.Errorf("%s: exported %v, but listed as not exported %v", name, exported, notExported[name])
		}
	}
	// Every Java LoadFailureReason has its series, under the Java tag (its lower-case name).
	enum, err := os.ReadFile("../../snapshot-format/src/main/java/io/bloomoperator/snapshot/LoadFailureReason.java")
	if err != nil {
		t.Fatal(err)
	}
	constants := regexp.MustCompile(`(?m)^  ([A-Z_]+)\((?:true|false)\)[,;]`).FindAllSubmatch(enum, -1)
	if len(constants) != len(reader.Reasons) {
		t.Fatalf("%d Java reasons, %d Go reasons", len(constants), len(reader.Reasons))
	}
	for _, c := range constants {
		if _, ok := got["bloomreader_load_failures_total{"+strings.ToLower(string(c[1]))+"}"]; !ok {
			t.Errorf("no load failure series for the Java reason %s", c[1])
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
