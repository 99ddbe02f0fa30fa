package reader

import (
	"context"
	"errors"
	"fmt"
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
	return &Reader{cfg: cfg, getter: getter}, nil
}

// Current returns the snapshot served, or nil before the first load.
func (r *Reader) Current() *Snapshot { return r.served.Load() }

// Ready reports whether a snapshot is served.
func (r *Reader) Ready() bool { return r.served.Load() != nil }

// MightContain asks the served filter about a String key; before the first load it answers true,
// or false with Config.FailClosed.
func (r *Reader) MightContain(key string) bool {
	if s := r.served.Load(); s != nil {
		return s.Filter.MightContain(key)
	}
	return !r.cfg.FailClosed
}

// MightContainInt64 asks the served filter about a Long key; before the first load as
// MightContain.
func (r *Reader) MightContainInt64(v int64) bool {
	if s := r.served.Load(); s != nil {
		return s.Filter.MightContainInt64(v)
	}
	return !r.cfg.FailClosed
}

// Sync reads the manifest ConfigMap and acts on it as Offer does. A missing manifest changes
// nothing served (its chunks go with it; a re-created one is picked up by a later Sync).
func (r *Reader) Sync(ctx context.Context) Result {
	cm, err := r.getter.GetConfigMap(ctx, r.cfg.Namespace, ManifestName(r.cfg.Filter))
	if errors.Is(err, ErrNotFound) || (err == nil && cm == nil) {
		return Result{Outcome: Kept}
	}
	if err != nil {
		return Result{Outcome: Refused, Err: &Error{Reason: ReasonAPI, Chunk: -1,
			msg: printable("GET manifest ConfigMap: " + err.Error()), cause: err}}
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
	f, err := load(ctx, chosen.m, served, configMapChunks(r.getter, r.cfg.Namespace))
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
// canonical chunk names; an object store (this reader knows none); the snapshot served (errSame);
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
	if m.HasStore {
		// Where a store is and how to reach it is the reader's configuration, never the
		// manifest's; this reader has none yet.
		return newError(ReasonUnknownStore, fmt.Sprintf(
			"manifest of %s/%s v%d keeps its chunks in object store '%s', which this reader is not configured for (it has no object store)",
			r.cfg.Namespace, r.cfg.Filter, m.Version, m.Store))
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
