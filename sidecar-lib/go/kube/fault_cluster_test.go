package kube

import (
	"context"
	"os"
	"testing"
	"time"

	"bloomoperator.io/reader"
)

// The watcher through an API server restart past etcd compaction (the resourceVersion it held is
// compacted away: the watch resumed from it is answered 410 Gone, counted by WatchExpirations, and
// only a new list finds what was published meanwhile) and a rollback,
// driven by the operator's ForeignReaderFaultTest on a RestartableCluster: step 1 a signed v1;
// step 2 v2, published while this reader's API server was down and etcd compacted; step 3 the
// genuinely signed v1 written back, to be refused as ROLLBACK while v2 keeps answering. The
// turns are storeStep/storeSeen's files. Skipped without that environment.
var faultEnv = []string{"KUBECONFIG", "BLOOM_CLUSTER_NAMESPACE", "BLOOM_CLUSTER_FILTER",
	"BLOOM_CLUSTER_DIR", "BLOOM_TRUSTED_KEY_FILE"}

func TestClusterFaults(t *testing.T) {
	skipWithout(t, "a restartable API server; run by the operator's ForeignReaderFaultTest", faultEnv)
	dir := os.Getenv("BLOOM_CLUSTER_DIR")
	pem, err := os.ReadFile(os.Getenv("BLOOM_TRUSTED_KEY_FILE"))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := reader.ParseTrustedKeys(string(pem))
	if err != nil {
		t.Fatal(err)
	}
	core := coreClient(t, os.Getenv("KUBECONFIG"))
	w, err := NewWatcher(reader.Config{
		Namespace: os.Getenv("BLOOM_CLUSTER_NAMESPACE"), Filter: os.Getenv("BLOOM_CLUSTER_FILTER"),
		KeyType: reader.KeyString, FailClosed: true, TrustedKeys: keys,
	}, core, Options{Resync: 2 * time.Second, Backoff: 200 * time.Millisecond, MaxBackoff: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	r := w.Reader()

	version, keyList, answers := storeStep(t, dir, 1)
	until(t, "v1", func() bool { s := r.Current(); return s != nil && s.Version == version })
	assertAnswers(t, r, keyList, answers)
	lists, expired := w.Lists(), w.WatchExpirations()
	storeSeen(t, dir, 1)

	// Step 2: published while the API server was down; found after it came back, by a new list.
	version, keyList, answers = storeStep(t, dir, 2)
	until(t, "v2 after the API server restart", func() bool { return r.Current().Version == version })
	assertAnswers(t, r, keyList, answers)
	if w.Lists() <= lists {
		t.Fatalf("%d lists before the restart, %d after: the watch was not listed again", lists, w.Lists())
	}
	// The watch resumed from the resourceVersion it held, compacted away: answered 410 Gone, and
	// the list came after that answer (not merely after the broken connection).
	if w.WatchExpirations() <= expired {
		t.Fatalf("no watch answered 410 Gone across the restart (%d expirations before, %d after)",
			expired, w.WatchExpirations())
	}
	storeSeen(t, dir, 2)

	// Step 3: v1 written back, genuinely signed: a rollback, refused; v2 keeps answering.
	version, keyList, answers = storeStep(t, dir, 3)
	until(t, "the rollback to be refused", func() bool {
		last := w.LastFailure()
		return last.Version == 1 && reader.ReasonOf(last.Err) == reader.ReasonRollback
	})
	if r.Current().Version != version {
		t.Fatalf("serves v%d after the rollback, want v%d", r.Current().Version, version)
	}
	assertAnswers(t, r, keyList, answers)
	storeSeen(t, dir, 3)
	until(t, "the Java side to finish", func() bool { return exists(dir + "/done") })
}
