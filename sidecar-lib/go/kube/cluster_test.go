package kube

import (
	"bufio"
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"

	"bloomoperator.io/reader"
)

// The watcher and the reader report against a real kube-apiserver, driven by sidecar-lib's
// GoReaderClusterTest, which publishes a base, a delta on it and a version with a tampered chunk,
// and after each step reads the report Lease with the operator's parser. The two processes take
// turns through files in BLOOM_CLUSTER_DIR: Java writes v<N>.keys (a key and Java's answer per
// line) and v<N>.published; this side writes v<N>.seen once it has checked a version. Without
// that environment the test is skipped, so check.sh stays offline.
var clusterEnv = []string{"KUBECONFIG", "BLOOM_CLUSTER_NAMESPACE", "BLOOM_CLUSTER_FILTER",
	"BLOOM_CLUSTER_DIR", "POD_NAME", "POD_UID", "BLOOM_CLUSTER_KUBECONFIG_NO_LEASES"}

const clusterWait = 60 * time.Second

func TestClusterFollowsBaseDeltaRefusesTamperedChunkAndReports(t *testing.T) {
	skipWithout(t, "a real API server; run by sidecar-lib's GoReaderClusterTest", clusterEnv)
	dir := os.Getenv("BLOOM_CLUSTER_DIR")
	w := clusterWatcher(t, os.Getenv("KUBECONFIG"), os.Getenv("POD_NAME"), os.Getenv("POD_UID"), nil)
	r := w.Reader()
	if r.MightContain("anything") || r.Ready() {
		t.Fatal("answered before the first load")
	}
	// A second reader whose account lacks the optional Lease rule: it must serve the same and
	// say once, not at every heartbeat, that it does not report.
	var logged lockedBuffer
	unreported := clusterWatcher(t, os.Getenv("BLOOM_CLUSTER_KUBECONFIG_NO_LEASES"), "app-1",
		"00000000-0000-4000-8000-000000000001", slog.New(slog.NewTextHandler(&logged, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { w.Run(ctx); done <- struct{}{} }()
	go func() { unreported.Run(ctx); done <- struct{}{} }()
	defer func() { cancel(); <-done; <-done }()

	keys, answers := expected(t, dir, 1)
	waitCtx, stop := context.WithTimeout(ctx, clusterWait)
	defer stop()
	if !w.WaitReady(waitCtx) {
		t.Fatal("no snapshot loaded")
	}
	if v := r.Current().Version; v != 1 {
		t.Fatalf("serves v%d, want v1", v)
	}
	assertAnswers(t, r, keys, answers)
	until(t, "the reader without Lease rights to load v1", func() bool {
		s := unreported.Reader().Current()
		return s != nil && s.Version == 1
	})
	assertAnswers(t, unreported.Reader(), keys, answers)
	seen(t, dir, 1)

	// v2: a delta on v1.
	keys, answers = expected(t, dir, 2)
	until(t, "v2 to be served", func() bool { return r.Current().Version == 2 })
	assertAnswers(t, r, keys, answers)
	seen(t, dir, 2)

	// v3: a chunk changed after its digest went into the manifest. Refused, retried, and v2
	// keeps answering meanwhile; the report says v3 fails (the Java side checks its reason).
	failures := w.Failures()
	expected(t, dir, 3)
	until(t, "v3 to be refused twice", func() bool { return w.Failures() >= failures+2 })
	if v := r.Current().Version; v != 2 {
		t.Fatalf("serves v%d after the tampered v3, want v2", v)
	}
	assertAnswers(t, r, keys, answers)
	if w.Loads() != 2 {
		t.Fatalf("%d loads, want 2", w.Loads())
	}
	// Several 1 s heartbeats have passed since it started: still one line.
	if n := strings.Count(logged.String(), "not reporting which version this pod serves"); n != 1 ||
		!strings.Contains(logged.String(), "code=403") {
		t.Fatalf("the reader without Lease rights said %d times that it does not report:\n%s", n, logged.String())
	}
	seen(t, dir, 3)
	// Heartbeats go on meanwhile; the Java side reads them before it says done.
	until(t, "the Java side to finish", func() bool { return exists(filepath.Join(dir, "done")) })
}

// skipWithout skips the test unless every variable of env is set (by the Java test that runs it).
func skipWithout(t *testing.T, what string, env []string) {
	t.Helper()
	var missing []string
	for _, name := range env {
		if os.Getenv(name) == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		t.Skipf("needs %s (missing %s)", what, strings.Join(missing, ", "))
	}
}

func expected(t *testing.T, dir string, version int) ([]string, []bool) {
	t.Helper()
	v := "v" + string(rune('0'+version))
	until(t, v+" to be published", func() bool { return exists(filepath.Join(dir, v+".published")) })
	f, err := os.Open(filepath.Join(dir, v+".keys"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var keys []string
	var answers []bool
	s := bufio.NewScanner(f)
	for s.Scan() {
		key, answer, _ := strings.Cut(s.Text(), "\t")
		keys = append(keys, key)
		answers = append(answers, answer == "1")
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return keys, answers
}

func assertAnswers(t *testing.T, r *reader.Reader, keys []string, answers []bool) {
	t.Helper()
	present := 0
	for i, k := range keys {
		if r.MightContain(k) != answers[i] {
			t.Fatalf("%q: answered %v, Java %v", k, !answers[i], answers[i])
		}
		if answers[i] {
			present++
		}
	}
	// The key sets hold present and absent keys: a filter answering all true would not pass.
	if present == 0 || present == len(keys) {
		t.Fatalf("%d of %d keys present: not a test of answers", present, len(keys))
	}
}

func seen(t *testing.T, dir string, version int) {
	t.Helper()
	name := filepath.Join(dir, "v"+string(rune('0'+version))+".seen")
	if err := os.WriteFile(name, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

func until(t *testing.T, what string, condition func() bool) {
	t.Helper()
	deadline := time.Now().Add(clusterWait)
	for !condition() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", clusterWait, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// clusterWatcher follows the test's filter as the account of kubeconfig, reporting as pod
// podName/podUID with a 1 s heartbeat; log nil means slog.Default().
func clusterWatcher(t *testing.T, kubeconfig, podName, podUID string, log *slog.Logger) *Watcher {
	t.Helper()
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	core, err := corev1client.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	leases, err := coordinationclient.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWatcher(reader.Config{
		Namespace: os.Getenv("BLOOM_CLUSTER_NAMESPACE"), Filter: os.Getenv("BLOOM_CLUSTER_FILTER"),
		KeyType: reader.KeyString, PodName: podName,
		FailClosed: true, // an answer before the first load would be a guess
	}, core, Options{
		Resync: 2 * time.Second, Backoff: 200 * time.Millisecond, MaxBackoff: time.Second,
		Reports: &Reports{Leases: leases, PodName: podName, PodUID: podUID, Heartbeat: time.Second},
		Logger:  log,
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// coreClient is the core/v1 client of kubeconfig's cluster and user.
func coreClient(t *testing.T, kubeconfig string) *corev1client.CoreV1Client {
	t.Helper()
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	core, err := corev1client.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	return core
}

// lockedBuffer is a log destination the watcher's goroutine writes while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
