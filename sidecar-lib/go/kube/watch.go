package kube

import (
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"

	"bloomoperator.io/reader"
)

// Options tune a Watcher; the zero value is the defaults.
type Options struct {
	// Resync re-offers the manifest the informer holds this often (default 60 s): a manifest
	// refused for a reason that may pass later (TOO_OLD against a clock, a rollback once the served
	// version is older) is looked at again without a new event.
	Resync time.Duration
	// Backoff is the first delay before a failed load is tried again (default 0.5 s), doubled up
	// to MaxBackoff (default 60 s). Refusals decided from the manifest alone are not retried:
	// they wait for a new manifest or the resync.
	Backoff, MaxBackoff time.Duration
	// Reports, when set, writes the pod's reader report (docs/reader-protocol.md).
	Reports *Reports
	// Logger receives load outcomes and the one "not reporting" line; nil means slog.Default().
	Logger *slog.Logger
}

// Watcher follows one filter: a client-go informer watches only the manifest ConfigMap
// <filter>-bloom (fieldSelector metadata.name), which gives list-then-watch from the list's
// resourceVersion, bookmarks, and a new list when the API server answers 410 Gone or restarts
// (each 410 counted: WatchExpirations).
// One goroutine hands each manifest to the Reader, retries failed loads with backoff and writes
// the reader report; lookups go to the Reader and never wait for it.
type Watcher struct {
	r        *reader.Reader
	cfg      reader.Config
	core     corev1client.CoreV1Interface
	opts     Options
	log      *slog.Logger
	manifest string
	ready    chan struct{}
	loads    atomic.Int64
	fails    atomic.Int64
	lists    atomic.Int64
	expired  atomic.Int64
	last     atomic.Pointer[reader.Result]
}

// NewWatcher returns a watcher of the filter cfg names, reading through core (e.g.
// clientset.CoreV1() or corev1client.NewForConfig(config)). It starts with Run.
func NewWatcher(cfg reader.Config, core corev1client.CoreV1Interface, opts Options) (*Watcher, error) {
	if core == nil {
		return nil, errors.New("kube: a core/v1 client is required")
	}
	r, err := reader.NewReader(cfg, NewConfigMaps(core.RESTClient()))
	if err != nil {
		return nil, err
	}
	if opts.Resync <= 0 {
		opts.Resync = 60 * time.Second
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 500 * time.Millisecond
	}
	if opts.MaxBackoff < opts.Backoff {
		opts.MaxBackoff = max(60*time.Second, opts.Backoff)
	}
	if opts.Reports != nil && opts.Reports.Leases == nil {
		return nil, errors.New("kube: Reports needs a Leases client")
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Watcher{r: r, cfg: cfg, core: core, opts: opts, log: log, manifest: reader.ManifestName(cfg.Filter),
		ready: make(chan struct{})}, nil
}

// Reader is the reader the watcher feeds: lookups (MightContain…), Current, Ready.
func (w *Watcher) Reader() *reader.Reader { return w.r }

// Loads and Failures count the snapshots loaded and the announcements refused so far.
func (w *Watcher) Loads() int64    { return w.loads.Load() }
func (w *Watcher) Failures() int64 { return w.fails.Load() }

// Lists counts the lists of the manifest ConfigMap: the first, and each new one after the watch
// was answered 410 Gone or its API server went away.
func (w *Watcher) Lists() int64 { return w.lists.Load() }

// WatchExpirations counts the watches of the manifest the API server answered 410 Gone ("too
// old resource version": the resourceVersion it resumed from was compacted away); each is followed
// by a new list. Exported by package metrics as bloomreader_watch_expirations_total.
func (w *Watcher) WatchExpirations() int64 { return w.expired.Load() }

// LastFailure is the last announcement refused (Outcome Refused, its Version and Err), or the
// zero Result before any.
func (w *Watcher) LastFailure() reader.Result {
	if r := w.last.Load(); r != nil {
		return *r
	}
	return reader.Result{}
}

// WaitReady waits until the first snapshot is served or ctx ends, and reports whether one is.
func (w *Watcher) WaitReady(ctx context.Context) bool {
	select {
	case <-w.ready:
		return true
	case <-ctx.Done():
		return w.r.Ready()
	}
}

// Run follows the filter until ctx ends; the last snapshot loaded stays served afterwards.
func (w *Watcher) Run(ctx context.Context) {
	cfg := w.cfg
	lw := cache.NewListWatchFromClient(w.core.RESTClient(), "configmaps", cfg.Namespace,
		fields.OneTermEqualSelector("metadata.name", w.manifest))
	// Counted: a relist (after 410 Gone or a restart) is what the watch does to recover. client-go
	// lists with a List call, or (WatchListClient, on by default) with a watch that asks for the
	// initial state (sendInitialEvents).
	list, watchFrom := lw.ListWithContextFunc, lw.WatchFuncWithContext
	lw.ListFunc, lw.WatchFunc = nil, nil // the calls without a context fall back to these
	lw.ListWithContextFunc = func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
		w.lists.Add(1)
		return list(ctx, options)
	}
	lw.WatchFuncWithContext = func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
		if options.SendInitialEvents != nil && *options.SendInitialEvents {
			w.lists.Add(1)
		}
		stream, err := watchFrom(ctx, options)
		if err != nil {
			w.expiredIf(err, options.ResourceVersion)
			return nil, err
		}
		// The API server answers a resumed watch whose resourceVersion is gone with an ERROR
		// event (status 410) on an open stream, rarely with the response's status; both count.
		return newCountingWatch(stream, func(e watch.Event) {
			if e.Type == watch.Error {
				w.expiredIf(apierrors.FromObject(e.Object), options.ResourceVersion)
			}
		}), nil
	}
	informer := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, w.opts.Resync, cache.Indexers{})
	// One pending kick is enough: the loop always offers the newest manifest the informer holds.
	kick := make(chan struct{}, 1)
	notify := func(any) {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, obj any) { notify(obj) },
		DeleteFunc: notify,
	})
	go informer.Run(ctx.Done())

	var rep *reporter
	heartbeat := time.NewTimer(time.Hour)
	heartbeat.Stop()
	if w.opts.Reports != nil {
		if w.opts.Reports.PodName == "" || w.opts.Reports.PodUID == "" {
			w.log.Warn("not reporting which version this pod serves: POD_NAME and POD_UID are not"+
				" both set (downward API, docs/reader-protocol.md); the filter works as before",
				"namespace", cfg.Namespace, "filter", cfg.Filter)
		} else {
			rep = newReporter(w.opts.Reports, cfg.Namespace, cfg.Filter, w.log)
			rep.write(ctx) // counted from its start, before it serves anything
			if !rep.refused {
				heartbeat.Reset(rep.nextHeartbeat())
			}
		}
	}
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	backoff := w.opts.Backoff
	for {
		select {
		case <-ctx.Done():
			return
		case <-heartbeat.C:
			rep.write(ctx)
			if !rep.refused { // stopped for good: no more heartbeats
				heartbeat.Reset(rep.nextHeartbeat())
			}
			continue
		case <-kick:
		case <-retry.C:
		}
		obj, exists, err := informer.GetStore().GetByKey(cfg.Namespace + "/" + w.manifest)
		if err != nil || !exists {
			continue // no manifest (yet, or deleted): the served snapshot stays
		}
		res := w.r.Offer(ctx, toConfigMap(obj.(*corev1.ConfigMap)))
		report := false
		switch res.Outcome {
		case reader.Loaded:
			w.loads.Add(1)
			w.log.Info("snapshot loaded", "namespace", cfg.Namespace, "filter", cfg.Filter, "version", res.Version)
			select {
			case <-w.ready:
			default:
				close(w.ready)
			}
			if rep != nil {
				rep.loaded(res.Version)
				report = true
			}
			backoff = w.opts.Backoff
			retry.Stop()
		case reader.Refused:
			w.fails.Add(1)
			w.last.Store(&res)
			reason := reader.ReasonOf(res.Err)
			w.log.Warn("snapshot not loaded", "namespace", cfg.Namespace, "filter", cfg.Filter,
				"version", res.Version, "reason", string(reason), "error", res.Err)
			if rep != nil && rep.failed(res.Version, reason) {
				report = true
			}
			if !reason.IsRefusal() {
				retry.Reset(backoff)
				backoff = min(2*backoff, w.opts.MaxBackoff)
			}
		default:
			backoff = w.opts.Backoff
			retry.Stop()
		}
		if res.CanaryErr != nil && rep != nil && rep.failed(res.CanaryVersion, reader.ReasonOf(res.CanaryErr)) {
			report = true
		}
		if report {
			rep.write(ctx)
		}
	}
}

// expiredIf counts err when it is the 410 Gone of a watch resumed from resourceVersion: the
// informer lists again next (client-go's reflector), logged once per expiry.
func (w *Watcher) expiredIf(err error, resourceVersion string) {
	if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		return
	}
	w.expired.Add(1)
	w.log.Info("manifest watch expired (410 Gone): relist after 410", "namespace", w.cfg.Namespace,
		"filter", w.cfg.Filter, "resourceVersion", resourceVersion)
}

// countingWatch passes a watch's events on after showing each to seen. Unlike watch.Filter its
// goroutine ends when the watch is stopped even if nobody reads the last event (the reflector
// stops reading when it stops a watch), so no goroutine is left per watch.
type countingWatch struct {
	inner  watch.Interface
	result chan watch.Event
	stop   chan struct{}
	once   sync.Once
}

func newCountingWatch(inner watch.Interface, seen func(watch.Event)) *countingWatch {
	c := &countingWatch{inner: inner, result: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(c.result)
		for e := range inner.ResultChan() {
			seen(e)
			select {
			case c.result <- e:
			case <-c.stop:
				return
			}
		}
	}()
	return c
}

func (c *countingWatch) ResultChan() <-chan watch.Event { return c.result }

func (c *countingWatch) Stop() {
	c.once.Do(func() { close(c.stop) })
	c.inner.Stop()
}

// toConfigMap is the part of the informer's ConfigMap the reader judges (the manifest ConfigMap
// holds data keys only; binaryData is carried as the API server sends it, Base64).
func toConfigMap(cm *corev1.ConfigMap) *reader.ConfigMap {
	out := &reader.ConfigMap{
		Metadata: reader.ObjectMeta{Name: cm.Name, Namespace: cm.Namespace, Labels: cm.Labels,
			Annotations: cm.Annotations},
		Data: cm.Data,
	}
	if len(cm.BinaryData) > 0 {
		out.BinaryData = make(map[string]string, len(cm.BinaryData))
		for k, v := range cm.BinaryData {
			out.BinaryData[k] = base64.StdEncoding.EncodeToString(v)
		}
	}
	return out
}
