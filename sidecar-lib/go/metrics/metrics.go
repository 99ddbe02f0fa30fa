// Package metrics exports readers' counters (reader.Reader.Stats) to Prometheus under the Java
// reader's metric names (io.bloomoperator.watch.metrics.ReaderMetricNames), so the project's
// dashboard and alert rules (deploy/monitoring) work for Go readers unchanged:
//
//	bloomreader_snapshot_version{namespace,filter}          gauge, -1 before the first snapshot
//	bloomreader_snapshot_age_seconds{namespace,filter}      gauge, since the manifest's createdAt; NaN before
//	bloomreader_swaps_total{namespace,filter}               counter, snapshots loaded and served
//	bloomreader_load_failures_total{namespace,filter,reason} counter, reason as the Java tag (e.g. rollback)
//	bloomreader_lookups_total{namespace,filter}             counter, keys asked (batches per key)
//	bloomreader_maybe_present_total{namespace,filter}       counter, of which answered true
//	bloomreader_fpp_expected{namespace,filter}              gauge, the manifest's expectedFpp; NaN before
//
// and, for a reader added with AddWatched (a kube.Watcher), one the Java reader does not have
// (fabric8's informer recovers from a 410 inside and does not tell):
//
//	bloomreader_watch_expirations_total{namespace,filter}   counter, manifest watches answered 410 Gone
//
// Lookups are the keys asked through the Reader, batches included. The Java reader's metrics of
// features this reader does not have are not exported: bloomreader_fpp_observed and
// bloomreader_outcomes_total (no recordOutcome), bloomreader_local_adds and the
// bloomreader_local_adds_{refused,expired,arrived}_total counters (no addLocal),
// bloomreader_deltas_in_place_total and bloomreader_in_place_digest_mismatches_total (deltas are
// always swapped in).
//
// It is a package of its own so that the reader core does not depend on the Prometheus client.
package metrics

import (
	"math"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"bloomoperator.io/reader"
)

// Collector is a prometheus.Collector of one or more readers, each labelled with its namespace
// and filter; it reads their counters at scrape time and keeps nothing itself.
type Collector struct {
	readers []labelled
	now     func() time.Time
}

type labelled struct {
	r                 *reader.Reader
	watched           Watched // nil for a reader added with Add
	namespace, filter string
}

// Watched is a reader followed by a watch that counts its expirations (kube.Watcher).
type Watched interface {
	Reader() *reader.Reader
	WatchExpirations() int64
}

var (
	labels                                = []string{"namespace", "filter"}
	version                               = prometheus.NewDesc("bloomreader_snapshot_version", "Version of the served snapshot; -1 before the first", labels, nil)
	age                                   = prometheus.NewDesc("bloomreader_snapshot_age_seconds", "Time since the served snapshot was built (manifest createdAt)", labels, nil)
	swaps                                 = prometheus.NewDesc("bloomreader_swaps_total", "Snapshots swapped in", labels, nil)
	failures                              = prometheus.NewDesc("bloomreader_load_failures_total", "Failed load attempts", append(labels, "reason"), nil)
	lookups                               = prometheus.NewDesc("bloomreader_lookups_total", "mightContain calls", labels, nil)
	maybePresent                          = prometheus.NewDesc("bloomreader_maybe_present_total", "mightContain calls that answered maybe present", labels, nil)
	fppExpected                           = prometheus.NewDesc("bloomreader_fpp_expected", "Expected false-positive probability of the served snapshot", labels, nil)
	watchExpirations                      = prometheus.NewDesc("bloomreader_watch_expirations_total", "Manifest watches answered 410 Gone (resourceVersion compacted away), each followed by a new list", labels, nil)
	descriptors                           = []*prometheus.Desc{version, age, swaps, failures, lookups, maybePresent, fppExpected, watchExpirations}
	_                prometheus.Collector = (*Collector)(nil)
)

// NewCollector returns the collector of readers, each labelled with namespace and filter as
// given (the reader's Config.Namespace and Config.Filter); register it with a
// prometheus.Registerer.
func NewCollector() *Collector { return &Collector{now: time.Now} }

// Add exports r's metrics labelled namespace and filter; call before registering.
func (c *Collector) Add(r *reader.Reader, namespace, filter string) *Collector {
	c.readers = append(c.readers, labelled{r: r, namespace: namespace, filter: filter})
	return c
}

// AddWatched exports the metrics of w's reader and its watch expirations, labelled namespace and
// filter; call before registering.
func (c *Collector) AddWatched(w Watched, namespace, filter string) *Collector {
	c.readers = append(c.readers, labelled{r: w.Reader(), watched: w, namespace: namespace, filter: filter})
	return c
}

// Describe sends the descriptors of every metric.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range descriptors {
		ch <- d
	}
}

// Collect reads each reader's counters and served snapshot.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, l := range c.readers {
		stats := l.r.Stats()
		v, a, fpp := -1.0, math.NaN(), math.NaN()
		if s := l.r.Current(); s != nil {
			v = float64(s.Version)
			a = c.now().Sub(s.CreatedAt).Seconds()
			fpp = s.Manifest.ExpectedFpp
		}
		ch <- prometheus.MustNewConstMetric(version, prometheus.GaugeValue, v, l.namespace, l.filter)
		ch <- prometheus.MustNewConstMetric(age, prometheus.GaugeValue, a, l.namespace, l.filter)
		ch <- prometheus.MustNewConstMetric(fppExpected, prometheus.GaugeValue, fpp, l.namespace, l.filter)
		ch <- prometheus.MustNewConstMetric(swaps, prometheus.CounterValue, float64(stats.Swaps), l.namespace, l.filter)
		ch <- prometheus.MustNewConstMetric(lookups, prometheus.CounterValue, float64(stats.Lookups), l.namespace, l.filter)
		ch <- prometheus.MustNewConstMetric(maybePresent, prometheus.CounterValue, float64(stats.MaybePresent), l.namespace, l.filter)
		if l.watched != nil {
			ch <- prometheus.MustNewConstMetric(watchExpirations, prometheus.CounterValue, float64(l.watched.WatchExpirations()),
				l.namespace, l.filter)
		}
		for _, reason := range reader.Reasons {
			ch <- prometheus.MustNewConstMetric(failures, prometheus.CounterValue, float64(stats.LoadFailures[reason]),
				l.namespace, l.filter, strings.ToLower(string(reason)))
		}
	}
}
