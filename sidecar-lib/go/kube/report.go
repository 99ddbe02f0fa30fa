package kube

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"bloomoperator.io/reader"
)

// Reports configures the pod's reader report (docs/reader-protocol.md): one Lease per pod and
// filter that the operator counts into the filter's status.readers and canary judgements.
// Reporting is optional: without the RBAC rule (leases get, create, update) the reader says so
// once and works as before.
type Reports struct {
	// Leases writes the report, e.g. clientset.CoordinationV1() or
	// coordinationv1client.NewForConfig(config).
	Leases coordinationclient.LeasesGetter
	// PodName and PodUID come from the downward API (POD_NAME, POD_UID: metadata.name and
	// metadata.uid); without both nothing is reported (the operator counts a report only when its
	// owner is this pod).
	PodName, PodUID string
	// Heartbeat is how often the report is renewed, times a random factor in [0.8, 1.2]; zero
	// means DefaultHeartbeat. The report counts as stale 3 heartbeats (1 s to 1 h) after the last.
	Heartbeat time.Duration
}

// DefaultHeartbeat is the Java reader's heartbeat: 1,000 readers write about 17 times a second.
const DefaultHeartbeat = 60 * time.Second

const (
	minStaleAfter = time.Second
	maxStaleAfter = time.Hour
	// writeTimeout bounds one report write: the watcher goroutine writes it between manifest
	// events, so a hanging API server must not hold the next load for long.
	writeTimeout = 10 * time.Second
)

// reporter writes the report. It is confined to the watcher's goroutine: one write at a time,
// never on the lookup path, and gone with the watcher.
type reporter struct {
	leases    coordinationclient.LeaseInterface
	namespace string
	filter    string
	pod, uid  string
	heartbeat time.Duration
	now       func() time.Time
	jitter    func() float64
	log       *slog.Logger

	served          int64
	loadedAt        time.Time // zero before the first load
	failingVersion  int64
	failingReason   reader.Reason
	resourceVersion string // of the last write; empty: create (or read) first
	refused         bool
}

func newReporter(cfg *Reports, namespace, filter string, log *slog.Logger) *reporter {
	heartbeat := cfg.Heartbeat
	if heartbeat <= 0 {
		heartbeat = DefaultHeartbeat
	}
	return &reporter{
		leases: cfg.Leases.Leases(namespace), namespace: namespace, filter: filter,
		pod: cfg.PodName, uid: cfg.PodUID, heartbeat: heartbeat,
		now: time.Now, jitter: rand.Float64, log: log,
	}
}

// nextHeartbeat is the delay to the next heartbeat: 0.8 to 1.2 times the interval, so readers
// started together (a rollout) drift apart.
func (r *reporter) nextHeartbeat() time.Duration {
	return time.Duration(float64(r.heartbeat) * (0.8 + 0.4*r.jitter()))
}

// staleAfter is how long after its last heartbeat the operator counts this reader as silent.
func (r *reporter) staleAfter() time.Duration {
	return min(max(3*r.heartbeat, minStaleAfter), maxStaleAfter)
}

// loaded records a swap to version; a failing version up to it is resolved. The caller writes.
func (r *reporter) loaded(version int64) {
	r.served = version
	r.loadedAt = r.now()
	if r.failingVersion != 0 && r.failingVersion <= version {
		r.failingVersion, r.failingReason = 0, ""
	}
}

// failed records that version failed to load for reason; it reports whether that changes the
// report (a newer version than the one served, failing for the first time or for another reason:
// no write per retry).
func (r *reporter) failed(version int64, reason reader.Reason) bool {
	if version <= r.served || version <= 0 {
		return false // not a newer version (or the manifest unreadable): nothing to report
	}
	if version == r.failingVersion && reason == r.failingReason {
		return false
	}
	r.failingVersion, r.failingReason = version, reason
	return true
}

// lease is the report as the operator reads it (ReaderReports.toLease in the Java code).
func (r *reporter) lease() *coordinationv1.Lease {
	annotations := map[string]string{reader.AnnotationFilter: r.filter}
	if r.served != 0 {
		annotations[reader.AnnotationServed] = strconv.FormatInt(r.served, 10)
	}
	if r.failingVersion != 0 {
		annotations[reader.AnnotationFailingVersion] = strconv.FormatInt(r.failingVersion, 10)
		annotations[reader.AnnotationFailingReason] = string(r.failingReason)
	}
	seconds := int32(r.staleAfter() / time.Second)
	// MicroTime: the API server keeps microseconds.
	renew := metav1.NewMicroTime(r.now().UTC().Truncate(time.Microsecond))
	spec := coordinationv1.LeaseSpec{
		HolderIdentity:       &r.pod,
		LeaseDurationSeconds: &seconds,
		RenewTime:            &renew,
	}
	if !r.loadedAt.IsZero() {
		acquire := metav1.NewMicroTime(r.loadedAt.UTC().Truncate(time.Microsecond))
		spec.AcquireTime = &acquire
	}
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name:      reader.ReaderReportName(r.filter, r.uid),
			Namespace: r.namespace,
			Labels: map[string]string{
				reader.LabelRole:   reader.RoleReaderReport,
				reader.LabelFilter: reader.FilterLabelValue(r.filter),
			},
			Annotations: annotations,
			// No controller, no blockOwnerDeletion: the Lease goes with the pod, nothing more.
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: r.pod, UID: types.UID(r.uid)}},
		},
		Spec: spec,
	}
}

// write writes the report: update with the last resourceVersion; on 404 create, on 409 read and
// update once. 403/401 stop reporting for good (said once); other errors wait for the next
// heartbeat.
func (r *reporter) write(ctx context.Context) {
	if r.refused {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	lease := r.lease()
	var written *coordinationv1.Lease
	var err error
	if r.resourceVersion == "" {
		written, err = r.createOrRead(ctx, lease)
	} else {
		lease.ResourceVersion = r.resourceVersion
		written, err = r.leases.Update(ctx, lease, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			// Changed or deleted by someone else: start over.
			lease.ResourceVersion = ""
			written, err = r.createOrRead(ctx, lease)
		}
	}
	if err != nil {
		r.resourceVersion = ""
		if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
			r.refused = true
			r.log.Warn("not reporting which version this pod serves: the API server refused to write"+
				" the reader report Lease; the filter works as before. To report, grant the optional"+
				" rule in docs/reader-protocol.md (leases: get, create, update)",
				"namespace", r.namespace, "filter", r.filter, "lease", lease.Name,
				"code", statusCode(err))
			return
		}
		r.log.Debug("reader report not written, retrying at the next heartbeat",
			"namespace", r.namespace, "filter", r.filter, "error", err)
		return
	}
	if written != nil {
		r.resourceVersion = written.ResourceVersion
	} else {
		r.resourceVersion = ""
	}
}

// createOrRead creates the report, or if it exists (a restart of the same pod) overwrites it.
func (r *reporter) createOrRead(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	created, err := r.leases.Create(ctx, lease, metav1.CreateOptions{})
	if err == nil || !apierrors.IsAlreadyExists(err) && !apierrors.IsConflict(err) {
		return created, err
	}
	existing, err := r.leases.Get(ctx, lease.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil // deleted in between: created at the next write
	}
	if err != nil {
		return nil, err
	}
	lease.ResourceVersion = existing.ResourceVersion
	return r.leases.Update(ctx, lease, metav1.UpdateOptions{})
}

// statusCode is the HTTP status of an API error (0 for none): what is logged of a refusal.
func statusCode(err error) int32 {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Code
	}
	return 0
}
