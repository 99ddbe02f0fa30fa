package kube

import (
	"testing"
	"time"

	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"

	"bloomoperator.io/reader"
)

// The pacing of docs/reader-protocol.md, which keeps reader reports from churning the API server
// and the operator's status writes: a write per newer failing version or reason, never per retry;
// heartbeats 0.8..1.2 × the interval; stale after 3 heartbeats within 1 s..1 h.
func TestReportPacing(t *testing.T) {
	// A client that is never called: nothing here writes.
	leases, err := coordinationclient.NewForConfig(&rest.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	r := newReporter(&Reports{Leases: leases, PodName: "app-0", PodUID: "u"}, "shop", "ids", nil)
	if r.heartbeat != DefaultHeartbeat || r.staleAfter() != 3*time.Minute {
		t.Fatalf("heartbeat %s, stale after %s", r.heartbeat, r.staleAfter())
	}
	for _, c := range []struct{ heartbeat, stale time.Duration }{
		{100 * time.Millisecond, time.Second}, {time.Second, 3 * time.Second}, {2 * time.Hour, time.Hour},
	} {
		r.heartbeat = c.heartbeat
		if got := r.staleAfter(); got != c.stale {
			t.Errorf("heartbeat %s: stale after %s, want %s", c.heartbeat, got, c.stale)
		}
	}
	r.heartbeat = time.Minute
	for _, j := range []float64{0, 0.5, 0.999999} {
		r.jitter = func() float64 { return j }
		if d := r.nextHeartbeat(); d < 48*time.Second || d > 72*time.Second {
			t.Errorf("jitter %v: next heartbeat in %s", j, d)
		}
	}

	if r.failed(0, reader.ReasonVerification) {
		t.Error("an unreadable manifest (version 0) was reported")
	}
	if !r.failed(3, reader.ReasonVerification) || r.failed(3, reader.ReasonVerification) {
		t.Error("a failing version must be written once, not per retry")
	}
	if !r.failed(3, reader.ReasonChunk) || !r.failed(4, reader.ReasonChunk) {
		t.Error("another reason or a newer version must be written")
	}
	r.loaded(2)
	if r.failingVersion != 4 {
		t.Error("a swap to an older version resolved a newer failing one")
	}
	if r.failed(2, reader.ReasonRollback) || r.failed(1, reader.ReasonRollback) {
		t.Error("a version not newer than the one served was reported as failing")
	}
	r.loaded(4)
	if r.failingVersion != 0 || r.failingReason != "" {
		t.Error("the swap to the failing version did not resolve it")
	}
	lease := r.lease()
	if lease.Annotations[reader.AnnotationServed] != "4" ||
		lease.Annotations[reader.AnnotationFailingVersion] != "" || lease.Spec.AcquireTime == nil ||
		*lease.Spec.LeaseDurationSeconds != 180 || lease.Name != reader.ReaderReportName("ids", "u") {
		t.Errorf("lease %+v", lease)
	}
}
