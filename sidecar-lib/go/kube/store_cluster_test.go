package kube

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"bloomoperator.io/reader"
)

// Chunks the operator published into an object store (versitygw), driven by the operator's
// ForeignReaderStoreTest: the reader resolves the manifest's store name with its own
// configuration (endpoint, bucket, prefix, region, key files of a read-only user) and must answer
// as the Java reader does, for a whole version (step 1) and the delta on it (step 2). Java writes
// s<N>.keys (the version, then a key and Java's answer per line) and s<N>.published; this side
// writes s<N>.go.seen. Skipped without that environment.
var storeEnv = []string{"KUBECONFIG", "BLOOM_CLUSTER_NAMESPACE", "BLOOM_CLUSTER_FILTER",
	"BLOOM_CLUSTER_DIR", "BLOOM_STORE_NAME", "BLOOM_STORE_ENDPOINT", "BLOOM_STORE_BUCKET",
	"BLOOM_STORE_PREFIX", "BLOOM_STORE_REGION", "BLOOM_STORE_ACCESS_KEY_FILE",
	"BLOOM_STORE_SECRET_KEY_FILE"}

func TestClusterStore(t *testing.T) {
	skipWithout(t, "a real API server and S3 store; run by the operator's ForeignReaderStoreTest", storeEnv)
	dir := os.Getenv("BLOOM_CLUSTER_DIR")
	core := coreClient(t, os.Getenv("KUBECONFIG"))
	store := func(credentials reader.S3Credentials) reader.ObjectStore {
		s, err := reader.NewS3Store(reader.S3Config{
			Endpoint: os.Getenv("BLOOM_STORE_ENDPOINT"), Bucket: os.Getenv("BLOOM_STORE_BUCKET"),
			Prefix: os.Getenv("BLOOM_STORE_PREFIX"), Region: os.Getenv("BLOOM_STORE_REGION"),
			Credentials: credentials, Attempts: 2,
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cfg := func(stores map[string]reader.ObjectStore) reader.Config {
		return reader.Config{Namespace: os.Getenv("BLOOM_CLUSTER_NAMESPACE"), Filter: os.Getenv("BLOOM_CLUSTER_FILTER"),
			KeyType: reader.KeyString, FailClosed: true, ObjectStores: stores}
	}
	name := os.Getenv("BLOOM_STORE_NAME")
	w, err := NewWatcher(cfg(map[string]reader.ObjectStore{name: store(reader.AccessKeyFiles(
		os.Getenv("BLOOM_STORE_ACCESS_KEY_FILE"), os.Getenv("BLOOM_STORE_SECRET_KEY_FILE")))}),
		core, Options{Resync: 2 * time.Second, Backoff: 200 * time.Millisecond, MaxBackoff: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	r := w.Reader()

	version, keys, answers := storeStep(t, dir, 1)
	until(t, "the store's v"+strconv.FormatInt(version, 10)+" to be served", func() bool {
		s := r.Current()
		return s != nil && s.Version == version
	})
	assertAnswers(t, r, keys, answers)

	// The same manifest, read by readers configured otherwise: wrong credentials are the store's
	// refusal (STORE_DENIED), no configuration for the name is UNKNOWN_STORE; neither serves.
	getter := NewConfigMaps(core.RESTClient())
	for _, c := range []struct {
		stores map[string]reader.ObjectStore
		want   reader.Reason
	}{
		{map[string]reader.ObjectStore{name: store(reader.StaticCredentials("bloomreader", "not-the-secret"))}, reader.ReasonStoreDenied},
		{map[string]reader.ObjectStore{"another-store": store(reader.StaticCredentials("x", "y"))}, reader.ReasonUnknownStore},
	} {
		other, err := reader.NewReader(cfg(c.stores), getter)
		if err != nil {
			t.Fatal(err)
		}
		res := other.Sync(ctx)
		if res.Outcome != reader.Refused || reader.ReasonOf(res.Err) != c.want || other.Ready() {
			t.Fatalf("a reader with stores %v: %v %v, want refused %s", c.stores, res.Outcome, res.Err, c.want)
		}
	}
	storeSeen(t, dir, 1)

	// Step 2: a delta on it, fetched from the store and applied to a copy of the served bits.
	version, keys, answers = storeStep(t, dir, 2)
	until(t, "the delta v"+strconv.FormatInt(version, 10)+" to be served", func() bool { return r.Current().Version == version })
	if r.Current().Manifest.Chain == nil {
		t.Fatal("step 2 is not a delta")
	}
	assertAnswers(t, r, keys, answers)
	if w.Failures() != 0 {
		t.Fatalf("%d failed loads", w.Failures())
	}
	storeSeen(t, dir, 2)
	until(t, "the Java side to finish", func() bool { return exists(filepath.Join(dir, "done")) })
}

func storeStep(t *testing.T, dir string, step int) (int64, []string, []bool) {
	t.Helper()
	return roleStep(t, dir, step, "")
}

// roleStep is step's version and Java's answers for the readers of role (s<N>.<role>.keys; ""
// for s<N>.keys), once Java has published the step.
func roleStep(t *testing.T, dir string, step int, role string) (int64, []string, []bool) {
	t.Helper()
	s := "s" + strconv.Itoa(step)
	until(t, s+" to be published", func() bool { return exists(filepath.Join(dir, s+".published")) })
	name := s + ".keys"
	if role != "" {
		name = s + "." + role + ".keys"
	}
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		t.Fatal("no version line")
	}
	version, err := strconv.ParseInt(sc.Text(), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	var answers []bool
	for sc.Scan() {
		key, answer, _ := strings.Cut(sc.Text(), "\t")
		keys = append(keys, key)
		answers = append(answers, answer == "1")
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return version, keys, answers
}

func storeSeen(t *testing.T, dir string, step int) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "s"+strconv.Itoa(step)+".go.seen"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}
