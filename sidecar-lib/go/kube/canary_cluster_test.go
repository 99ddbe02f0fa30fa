package kube

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A canary the operator publishes (spec.rollout.canary), driven by the operator's
// ForeignReaderCanaryTest: two watchers, one as a pod inside the share and one as a pod outside it
// (BLOOM_CANARY_GO_IN and BLOOM_CANARY_GO_OUT: "<pod name> <pod uid>" of Pods Java made), each
// writing its reader report. Step 1 the stable v1 for both; step 2 the canary for the one inside
// (s2.canary.keys) while the other stays on v1 (s2.stable.keys); step 3, after the canary was
// aborted, the stable payload republished above it for both. Answers must be Java's. Skipped
// without that environment.
var canaryEnv = []string{"KUBECONFIG", "BLOOM_CLUSTER_NAMESPACE", "BLOOM_CLUSTER_FILTER",
	"BLOOM_CLUSTER_DIR", "BLOOM_CANARY_GO_IN", "BLOOM_CANARY_GO_OUT"}

func TestClusterCanary(t *testing.T) {
	skipWithout(t, "a real API server and the operator; run by the operator's ForeignReaderCanaryTest", canaryEnv)
	dir := os.Getenv("BLOOM_CLUSTER_DIR")
	ctx, cancel := context.WithCancel(context.Background())
	var done []chan struct{}
	defer func() {
		cancel()
		for _, d := range done {
			<-d
		}
	}()
	start := func(variable string) *Watcher {
		pod, uid, ok := strings.Cut(os.Getenv(variable), " ")
		if !ok {
			t.Fatalf("%s is not '<pod name> <pod uid>'", variable)
		}
		w := clusterWatcher(t, os.Getenv("KUBECONFIG"), pod, uid, nil)
		d := make(chan struct{})
		done = append(done, d)
		go func() { w.Run(ctx); close(d) }()
		return w
	}
	in, out := start("BLOOM_CANARY_GO_IN"), start("BLOOM_CANARY_GO_OUT")

	for step := 1; step <= 3; step++ {
		for _, c := range []struct {
			w    *Watcher
			role string
		}{{in, "canary"}, {out, "stable"}} {
			version, keys, answers := roleStep(t, dir, step, c.role)
			r := c.w.Reader()
			until(t, c.role+" reader to serve v"+strconv.FormatInt(version, 10), func() bool {
				s := r.Current()
				return s != nil && s.Version == version
			})
			assertAnswers(t, r, keys, answers)
			if c.w.Failures() != 0 {
				t.Fatalf("%s reader: %d failed loads, the last %v", c.role, c.w.Failures(), c.w.LastFailure().Err)
			}
		}
		storeSeen(t, dir, step)
	}
	// Stays until Java is done: the reports of both keep being renewed.
	until(t, "the Java side to finish", func() bool { return exists(filepath.Join(dir, "done")) })
}
