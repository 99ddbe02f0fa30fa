package kube

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"bloomoperator.io/reader"
)

// A watch answered 410 Gone, as an ERROR event (what kube-apiserver sends for a resourceVersion
// its watch cache no longer has) or as the response's status, is counted and logged once; other
// errors and events are not. ForeignReaderFaultTest proves the same on a real API server.
func TestWatchExpirationsAreCounted(t *testing.T) {
	var log strings.Builder
	w := &Watcher{cfg: reader.Config{Namespace: "shop", Filter: "ids"},
		log: slog.New(slog.NewTextHandler(&log, nil))}
	fake := watch.NewFake()
	counting := newCountingWatch(fake, func(e watch.Event) {
		if e.Type == watch.Error {
			w.expiredIf(apierrors.FromObject(e.Object), "17")
		}
	})
	go func() {
		fake.Add(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ids-bloom"}})
		fake.Error(&metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
			Reason: metav1.StatusReasonInternalError, Message: "etcd"})
		fake.Error(&metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGone,
			Reason: metav1.StatusReasonExpired, Message: "too old resource version: 17 (90)"})
	}()
	for i := 0; i < 3; i++ {
		<-counting.ResultChan()
	}
	w.expiredIf(apierrors.NewResourceExpired("too old resource version"), "18")
	w.expiredIf(apierrors.NewGone("gone"), "19")
	w.expiredIf(apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "x"), "20")
	w.expiredIf(io.EOF, "21")
	if n := w.WatchExpirations(); n != 3 {
		t.Fatalf("%d expirations counted, want 3", n)
	}
	if n := strings.Count(log.String(), "relist after 410"); n != 3 {
		t.Fatalf("%d log lines:\n%s", n, log.String())
	}

	// Stopped while an event waits that nobody reads (the reflector stops reading when it stops a
	// watch): the goroutine ends and closes the channel without delivering it.
	buffered := watch.NewFakeWithChanSize(1, false)
	stopped := newCountingWatch(buffered, func(watch.Event) {})
	buffered.Add(&corev1.ConfigMap{})
	time.Sleep(100 * time.Millisecond) // taken from the inner watch, waiting to be read
	stopped.Stop()
	time.Sleep(100 * time.Millisecond)
	select {
	case e, ok := <-stopped.ResultChan():
		if ok {
			t.Fatalf("delivered %v after Stop: its goroutine was still waiting to send", e.Type)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the watch's goroutine did not end after Stop")
	}
}
