package reader

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config is what a reader serves and accepts.
type Config struct {
	// Namespace and Filter name the BloomFilter; signatures are bound to the namespace.
	Namespace string
	Filter    string
	// KeyType is the key type the application asks about; a snapshot of the other type is refused.
	KeyType KeyType
	// PodName decides the canary share (docs/reader-protocol.md); empty: never in a share.
	PodName string
	// TrustedKeys, when not empty, makes signatures mandatory and refuses rollbacks.
	TrustedKeys *TrustedKeys
	// Limits bound what is accepted before anything is fetched; zero means DefaultLimits().
	Limits Limits
	// MaxManifestAge, when positive (and keys are trusted, as the signed createdAt is all it can
	// go by), refuses manifests created longer ago than that with reason TOO_OLD.
	MaxManifestAge time.Duration
	// Now is the clock for MaxManifestAge; nil means time.Now.
	Now func() time.Time
	// ObjectStores are the object stores this reader may read chunks from, by the name a manifest's
	// "store" gives (the operator's BloomStore name); a manifest naming any other store is refused
	// (UNKNOWN_STORE) before anything is fetched. Endpoint, bucket and credentials are the stores'
	// own configuration (NewS3Store), never the manifest's.
	ObjectStores map[string]ObjectStore
	// FetchParallelism is how many chunks are fetched at once (1..MaxFetchParallelism; 0 means
	// DefaultFetchParallelism, 4): each is checked (size, SHA-256) as it arrives and used in
	// order, at most this many are held at once, and the first failure cancels the rest. The
	// ConfigMapGetter and ObjectStores are called this many times at once; 1 fetches one at a
	// time.
	FetchParallelism int
	// FailClosed makes Reader.MightContain* answer false ("definitely absent") before the first
	// snapshot is loaded. The default answers true ("maybe present"): callers fall through to
	// their source of truth, so a missing filter costs load, never wrong answers.
	FailClosed bool
}

// Snapshot is a verified version being served: immutable, published with one atomic store.
type Snapshot struct {
	Version   int64
	SHA256    string
	CreatedAt time.Time
	// Format is the manifest's format id, e.g. guava-bloomfilter-chain-v1.
	Format   string
	Manifest *Manifest
	Filter   *Filter

	// json and signature are the announcement exactly as read, for what comes later (a local
	// snapshot directory must keep the signed text, not a re-serialisation).
	json      string
	signature string
}

// Outcome is what an announcement led to.
type Outcome int

const (
	// Kept: nothing to load (the same snapshot is served, or there is no manifest); the served
	// filter is unchanged.
	Kept Outcome = iota
	// Loaded: a new snapshot was verified and is served now.
	Loaded
	// Refused: the announcement was not loaded, Result.Err says why (a refusal of the manifest,
	// or a failure to read or verify what it names); the served filter is unchanged.
	Refused
)

func (o Outcome) String() string {
	switch o {
	case Loaded:
		return "load"
	case Refused:
		return "refuse"
	}
	return "keep"
}

// Result reports one Sync or Offer.
type Result struct {
	Outcome Outcome
	// Version is the version announced (0 when unknown, e.g. an unreadable manifest).
	Version int64
	// Err is set when Outcome is Refused; ReasonOf(Err) gives its Reason.
	Err error
	// CanaryErr is set when this reader is in a canary share but may not load the canary: it
	// followed the stable manifest, and the canary's version (CanaryVersion) failed for this reason.
	CanaryErr     error
	CanaryVersion int64
}

// Reader follows one filter's manifest and serves the last snapshot it verified. Lookups
// (Current, MightContain…) are lock-free and may run concurrently with Sync/Offer, which are
// serialised. A Reader does not watch by itself: call Sync when the manifest may have changed (a
// watch event, a resync timer) and again after a failure, or let a kube.Watcher do it.
type Reader struct {
	cfg    Config
	getter ConfigMapGetter
	mu     sync.Mutex
	served atomic.Pointer[Snapshot]

	// Counters behind Stats (and package metrics): lookups on the lookup path, the rest under mu.
	lookups, maybePresent, swaps atomic.Uint64
	failures                     map[Reason]*atomic.Uint64 // every Reason; read-only after NewReader
}

// Reasons are every Reason, in the Java reader's LoadFailureReason order.
var Reasons = []Reason{ReasonAPI, ReasonChunk, ReasonHeap, ReasonStoreDenied, ReasonStoreUnavailable,
	ReasonDisk, ReasonVerification, ReasonTooLarge, ReasonWrongFilter, ReasonForeignChunk, ReasonUnsigned,
	ReasonUntrustedKey, ReasonBadSignature, ReasonRollback, ReasonTooOld, ReasonUnknownStore}

// Stats are a reader's counters since it was made, the numbers behind the Java reader's metrics
// (package metrics exports them for Prometheus under the same names).
type Stats struct {
	// Lookups counts the keys asked about through the Reader (MightContain, MightContainInt64 and
	// each key of a batch); MaybePresent those answered true. Lookups made on a Snapshot's Filter
	// directly are not counted.
	Lookups, MaybePresent uint64
	// Swaps counts snapshots loaded and served.
	Swaps uint64
	// LoadFailures counts refused announcements and failed loads by reason (a canary this reader
	// may not follow included), each Sync or Offer that ended so once.
	LoadFailures map[Reason]uint64
}

// Stats returns the reader's counters.
func (r *Reader) Stats() Stats {
	s := Stats{Lookups: r.lookups.Load(), MaybePresent: r.maybePresent.Load(), Swaps: r.swaps.Load(),
		LoadFailures: make(map[Reason]uint64, len(r.failures))}
	for reason, n := range r.failures {
		s.LoadFailures[reason] = n.Load()
	}
	return s
}

func (r *Reader) counted(res Result) Result {
	if res.Outcome == Refused {
		r.failures[ReasonOf(res.Err)].Add(1)
	}
	if res.CanaryErr != nil {
		r.failures[ReasonOf(res.CanaryErr)].Add(1)
	}
	if res.Outcome == Loaded {
		r.swaps.Add(1)
	}
	return res
}

func (r *Reader) answer(maybe bool) bool {
	r.lookups.Add(1)
	if maybe {
		r.maybePresent.Add(1)
	}
	return maybe
}

// NewReader returns a reader for cfg that reads ConfigMaps through getter.
func NewReader(cfg Config, getter ConfigMapGetter) (*Reader, error) {
	if cfg.Namespace == "" || strings.Contains(cfg.Namespace, "\n") {
		return nil, errors.New("reader: a namespace is required")
	}
	if cfg.Filter == "" {
		return nil, errors.New("reader: a filter name is required")
	}
	if cfg.KeyType != KeyString && cfg.KeyType != KeyLong {
		return nil, fmt.Errorf("reader: key type must be %q or %q, got %q", KeyString, KeyLong, cfg.KeyType)
	}
	if cfg.Limits == (Limits{}) {
		cfg.Limits = DefaultLimits()
	}
	if cfg.Limits.MaxTotalBytes < 1 || cfg.Limits.MaxChunks < 1 {
		return nil, fmt.Errorf("reader: limits must be positive, got %+v", cfg.Limits)
	}
	if cfg.MaxManifestAge > 0 && cfg.TrustedKeys.len() == 0 {
		return nil, errors.New("reader: a maximum manifest age needs a trusted key")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if getter == nil {
		return nil, errors.New("reader: a ConfigMapGetter is required")
	}
	parallel, err := fetchParallelism(cfg.FetchParallelism)
	if err != nil {
		return nil, err
	}
	cfg.FetchParallelism = parallel
	failures := make(map[Reason]*atomic.Uint64, len(Reasons))
	for _, reason := range Reasons {
		failures[reason] = new(atomic.Uint64)
	}
	return &Reader{cfg: cfg, getter: getter, failures: failures}, nil
}

// Current returns the snapshot served, or nil before the first load.
func (r *Reader) Current() *Snapshot { return r.served.Load() }

// Ready reports whether a snapshot is served.
func (r *Reader) Ready() bool { return r.served.Load() != nil }

// MightContain asks the served filter about a String key; before the first load it answers true,
// or false with Config.FailClosed.
func (r *Reader) MightContain(key string) bool {
	if s := r.served.Load(); s != nil {
		return r.answer(s.Filter.MightContain(key))
	}
	return r.answer(!r.cfg.FailClosed)
}

// MightContainInt64 asks the served filter about a Long key; before the first load as
// MightContain.
func (r *Reader) MightContainInt64(v int64) bool {
	if s := r.served.Load(); s != nil {
		return r.answer(s.Filter.MightContainInt64(v))
	}
	return r.answer(!r.cfg.FailClosed)
}

// MightContainBatch answers MightContain for each key into results[i] (results at least as long
// as keys), all against the same snapshot; each key counts as one lookup, as in the Java reader's
// mightContainAll. Before the first load every answer is as MightContain's.
func (r *Reader) MightContainBatch(keys []string, results []bool) {
	if s := r.served.Load(); s != nil {
		s.Filter.MightContainBatch(keys, results)
	} else {
		fill(results[:len(keys)], !r.cfg.FailClosed)
	}
	r.answered(results[:len(keys)])
}

// MightContainInt64Batch answers MightContainInt64 for each key into results[i], as
// MightContainBatch.
func (r *Reader) MightContainInt64Batch(keys []int64, results []bool) {
	if s := r.served.Load(); s != nil {
		s.Filter.MightContainInt64Batch(keys, results)
	} else {
		fill(results[:len(keys)], !r.cfg.FailClosed)
	}
	r.answered(results[:len(keys)])
}

// answered counts a batch's lookups and maybe-present answers with two atomic additions.
func (r *Reader) answered(results []bool) {
	present := 0
	for _, maybe := range results {
		if maybe {
			present++
		}
	}
	r.lookups.Add(uint64(len(results)))
	r.maybePresent.Add(uint64(present))
}

func fill(results []bool, answer bool) {
	for i := range results {
		results[i] = answer
	}
}

// Sync reads the manifest ConfigMap and acts on it as Offer does. A missing manifest changes
// nothing served (its chunks go with it; a re-created one is picked up by a later Sync).
func (r *Reader) Sync(ctx context.Context) Result {
	cm, err := r.getter.GetConfigMap(ctx, r.cfg.Namespace, ManifestName(r.cfg.Filter))
	if errors.Is(err, ErrNotFound) || (err == nil && cm == nil) {
		return Result{Outcome: Kept}
	}
	if err != nil {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.counted(Result{Outcome: Refused, Err: &Error{Reason: ReasonAPI, Chunk: -1,
			msg: printable("GET manifest ConfigMap: " + err.Error()), cause: err}})
	}
	return r.Offer(ctx, cm)
}

// announcement is a manifest with the exact text it was parsed from and its signature.
type announcement struct {
	m            *Manifest
	json         string
	signature    string
	hasSignature bool
}

func (a *announcement) sameAs(s *Snapshot) bool {
	return s != nil && a.m.Version == s.Version && strings.EqualFold(a.m.SHA256, s.SHA256)
}

// Offer judges the manifest ConfigMap cm (as read from the API server) and, when accepted, loads
// and serves what it announces. The stable manifest must parse; a reader in the canary share
// follows a valid canary instead, unless it may not load it (Result.CanaryErr).
func (r *Reader) Offer(ctx context.Context, cm *ConfigMap) Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counted(r.offer(ctx, cm))
}

func (r *Reader) offer(ctx context.Context, cm *ConfigMap) Result {
	stable, err := readAnnouncement(cm, ManifestKey, SignatureKey)
	if err != nil {
		return Result{Outcome: Refused, Err: err}
	}
	served := r.served.Load()
	now := r.cfg.Now()
	var res Result
	chosen := stable
	if canary := r.canary(cm); canary != nil {
		if err := r.judge(canary, served, now); err != nil && !errors.Is(err, errSame) {
			res.CanaryErr, res.CanaryVersion = err, canary.m.Version
		} else {
			chosen = canary
		}
	}
	res.Version = chosen.m.Version
	switch err := r.judge(chosen, served, now); {
	case errors.Is(err, errSame):
		res.Outcome = Kept
		return res
	case err != nil:
		res.Outcome, res.Err = Refused, err
		return res
	}
	src := configMapChunks(r.getter, r.cfg.Namespace)
	if chosen.m.HasStore {
		// Every key is built before the first GET: a chunk without one refuses the manifest.
		if src, err = storeChunks(r.cfg.ObjectStores[chosen.m.Store], r.cfg.Namespace, r.cfg.Filter, chosen.m); err != nil {
			res.Outcome, res.Err = Refused, err
			return res
		}
	}
	f, err := load(ctx, chosen.m, served, src, r.cfg.FetchParallelism)
	if err != nil {
		res.Outcome, res.Err = Refused, err
		return res
	}
	r.served.Store(&Snapshot{
		Version: chosen.m.Version, SHA256: chosen.m.SHA256, CreatedAt: chosen.m.created,
		Format: chosen.m.Format, Manifest: chosen.m, Filter: f,
		json: chosen.json, signature: chosen.signature,
	})
	res.Outcome = Loaded
	return res
}

func readAnnouncement(cm *ConfigMap, manifestKey, signatureKey string) (*announcement, error) {
	text, ok := cm.Data[manifestKey]
	if !ok {
		return nil, verification(fmt.Sprintf("ConfigMap %s/%s has no data key '%s'",
			cm.Metadata.Namespace, cm.Metadata.Name, manifestKey))
	}
	m, err := ParseManifest(text)
	if err != nil {
		return nil, err
	}
	sig, hasSig := cm.Data[signatureKey]
	return &announcement{m: m, json: text, signature: sig, hasSignature: hasSig}, nil
}

// canary returns the canary this reader's pod is in the share of, or nil: none announced, not
// in the share, a malformed share or canary manifest (which counts as no canary).
func (r *Reader) canary(cm *ConfigMap) *announcement {
	if r.cfg.PodName == "" {
		return nil
	}
	if _, ok := cm.Data[CanaryManifestKey]; !ok {
		return nil
	}
	percent := canaryPercent(cm.Data[CanaryPercentKey])
	if percent < 1 {
		return nil
	}
	a, err := readAnnouncement(cm, CanaryManifestKey, CanarySignatureKey)
	if err != nil || !InCanaryShare(r.cfg.PodName, percent) {
		return nil
	}
	return a
}

// errSame is judge's verdict for the snapshot already served: nothing to load.
var errSame = errors.New("the snapshot served")

// judge is the reader's one acceptance rule, before anything is fetched or allocated, in the
// Java reader's order: a trusted signature (when keys are trusted); the filter name, limits and
// canonical chunk names; an object store this reader is configured for; the snapshot served (errSame);
// the maximum age; with trusted keys, a manifest not published after the served one is a
// rollback; last, the key type. Without trusted keys a lower version loads: it is the operator's
// current truth (a re-created filter).
func (r *Reader) judge(a *announcement, served *Snapshot, now time.Time) error {
	m := a.m
	if err := r.cfg.TrustedKeys.verify(r.cfg.Namespace, a.json, a.signature, a.hasSignature); err != nil {
		return err
	}
	if err := r.cfg.Limits.check(m, r.cfg.Filter); err != nil {
		return err
	}
	if _, known := r.cfg.ObjectStores[m.Store]; m.HasStore && !known {
		// Only the name is in the manifest; where the store is and how to reach it is this
		// reader's own configuration, so an unknown name cannot be resolved by anything it says.
		known := "(it has no object store)"
		if len(r.cfg.ObjectStores) > 0 {
			names := make([]string, 0, len(r.cfg.ObjectStores))
			for name := range r.cfg.ObjectStores {
				names = append(names, name)
			}
			sort.Strings(names)
			known = "(it knows [" + strings.Join(names, ", ") + "])"
		}
		return newError(ReasonUnknownStore, fmt.Sprintf(
			"manifest of %s/%s v%d keeps its chunks in object store '%s', which this reader is not configured for %s",
			r.cfg.Namespace, r.cfg.Filter, m.Version, m.Store, known))
	}
	if a.sameAs(served) {
		return errSame
	}
	if r.cfg.MaxManifestAge > 0 && m.created.Before(now.Add(-r.cfg.MaxManifestAge)) {
		return newError(ReasonTooOld, fmt.Sprintf(
			"signed manifest of %s/%s announces v%d created %s, more than %s ago; refused as too old",
			r.cfg.Namespace, r.cfg.Filter, m.Version, m.CreatedAt, r.cfg.MaxManifestAge))
	}
	if served != nil && r.cfg.TrustedKeys.len() > 0 && !m.publishedAfter(served.Manifest) {
		return newError(ReasonRollback, fmt.Sprintf(
			"signed manifest of %s/%s announces v%d created %s, not published after the served v%d created %s; refused as a rollback",
			r.cfg.Namespace, r.cfg.Filter, m.Version, m.CreatedAt, served.Version, served.Manifest.CreatedAt))
	}
	if m.KeyType != r.cfg.KeyType {
		return verification(fmt.Sprintf("snapshot v%d of '%s' holds %s keys but this filter was created for %s keys",
			m.Version, m.FilterName, m.KeyType, r.cfg.KeyType))
	}
	return nil
}
