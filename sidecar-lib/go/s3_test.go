package reader

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The example of AWS's Signature Version 4 documentation for S3 ("GET Object" with a Range
// header): the signature must be the one printed there.
func TestS3SignatureMatchesAWSExample(t *testing.T) {
	s, err := NewS3Store(S3Config{
		Endpoint: "https://s3.amazonaws.com", Bucket: "examplebucket", VirtualHostStyle: true,
		Credentials: StaticCredentials("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
	})
	if err != nil {
		t.Fatal(err)
	}
	s.now = func() time.Time { return time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC) }
	req, err := s.request(context.Background(), "test.txt", "bytes=0-9")
	if err != nil {
		t.Fatal(err)
	}
	want := "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, " +
		"SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, " +
		"Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
	if got := req.Header.Get("Authorization"); got != want {
		t.Fatalf("Authorization\n got %s\nwant %s", got, want)
	}
	if req.URL.String() != "https://examplebucket.s3.amazonaws.com/test.txt" {
		t.Fatalf("URL %s", req.URL)
	}
}

func TestObjectKeysAreStoreObjectKeys(t *testing.T) {
	sha := strings.Repeat("Ab", 32)
	key, err := ObjectKey("bloom/x_y", "shop", "ids", "ids-bloom-v7-d0", sha)
	if err != nil || key != "bloom/x_y/shop/ids/ids-bloom-v7-d0."+strings.ToLower(sha) {
		t.Fatalf("%q %v", key, err)
	}
	if key, _ := ObjectKey("", "shop", "ids", "ids-bloom-v1-0", sha); key != "shop/ids/ids-bloom-v1-0."+strings.ToLower(sha) {
		t.Fatalf("no prefix: %q", key)
	}
	for _, c := range [][3]string{
		{"bloom", "../other", sha}, {"bloom", "a/b", sha}, {"bloom", "a..b", sha}, {"bloom", "A", sha},
		{"bloom", "ids-bloom-v1-0", sha[1:]}, {"bloom", "ids-bloom-v1-0", "g" + sha[1:]},
		{"../x", "ids-bloom-v1-0", sha}, {"/x", "ids-bloom-v1-0", sha},
	} {
		if key, err := ObjectKey(c[0], "shop", "ids", c[1], c[2]); err == nil {
			t.Errorf("%v: key %q, want refused", c, key)
		}
	}
}

// Edge cases a real S3 server does not produce on demand (a response that breaks off, a
// redirect, an object of another size), from a loopback HTTP server that answers as S3 does.
func TestS3StoreReadsExactlyTheAnnouncedBytes(t *testing.T) {
	object := []byte("0123456789abcdefghijklmnopqrstuvwxyz")
	var requests atomic.Int32
	var redirected atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=id/") {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		var from, to int
		if _, err := fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &from, &to); err != nil {
			t.Errorf("no range: %q", r.Header.Get("Range"))
		}
		switch r.URL.Path {
		case "/b-b/p/ns/f/broken." + strings.Repeat("0", 64):
			// The first answer breaks off after 10 bytes; the next resumes at byte 10.
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", from, to, len(object)))
			w.Header().Set("Content-Length", fmt.Sprint(to-from+1))
			w.WriteHeader(http.StatusPartialContent)
			if from == 0 {
				w.Write(object[:10])
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler)
			}
			w.Write(object[from : to+1])
		case "/b-b/p/ns/f/drip." + strings.Repeat("0", 64):
			// Every answer brings one byte and breaks off: progress each time, never the chunk.
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", from, to, len(object)))
			w.Header().Set("Content-Length", fmt.Sprint(to-from+1))
			w.WriteHeader(http.StatusPartialContent)
			w.Write(object[from : from+1])
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		case "/b-b/p/ns/f/longer." + strings.Repeat("0", 64):
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", from, to, len(object)+1))
			w.WriteHeader(http.StatusPartialContent)
			w.Write(object[from : to+1])
		case "/b-b/p/ns/f/moved." + strings.Repeat("0", 64):
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		case "/elsewhere":
			redirected.Add(1)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	store := func(id string) *S3Store {
		s, err := NewS3Store(S3Config{Endpoint: srv.URL, Bucket: "b-b", Prefix: "p",
			Credentials: StaticCredentials(id, "secret"), Attempts: 2})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	key := func(name string) string { return "p/ns/f/" + name + "." + strings.Repeat("0", 64) }
	ctx := context.Background()

	data, err := store("id").Get(ctx, key("broken"), len(object))
	if err != nil || string(data) != string(object) {
		t.Fatalf("resumed read: %q %v", data, err)
	}
	if n := requests.Load(); n != 2 {
		t.Fatalf("%d requests, want 2 (the break resumed once)", n)
	}
	before := requests.Load()
	if _, err := store("id").Get(ctx, key("drip"), len(object)); ReasonOf(err) != ReasonStoreUnavailable {
		t.Fatalf("a store sending a byte an answer: %v, want STORE_UNAVAILABLE", err)
	}
	if n := requests.Load() - before; n != 3 {
		t.Fatalf("%d requests for a dripping store, want 3 (2 attempts + 1 for a chunk under 64 KiB)", n)
	}
	if _, err := store("id").Get(ctx, key("longer"), len(object)); ReasonOf(err) != ReasonChunk {
		t.Fatalf("an object of another size: %v, want CHUNK", err)
	}
	if _, err := store("id").Get(ctx, key("moved"), len(object)); ReasonOf(err) != ReasonStoreUnavailable ||
		!strings.Contains(err.Error(), "redirects are not followed") || redirected.Load() != 0 {
		t.Fatalf("a redirect: %v (followed %d times)", err, redirected.Load())
	}
	if data, err := store("id").Get(ctx, key("absent"), 5); data != nil || err != nil {
		t.Fatalf("a missing object: %q %v, want nil, nil", data, err)
	}
	var e *Error
	if _, err := store("intruder").Get(ctx, key("broken"), len(object)); !errors.As(err, &e) || e.Reason != ReasonStoreDenied {
		t.Fatalf("refused credentials: %v, want STORE_DENIED", err)
	}
	if _, err := store("id").Get(ctx, key("broken"), MaxChunkBytes+1); ReasonOf(err) != ReasonChunk {
		t.Fatalf("more than a chunk: %v", err)
	}
}

// chunkObjects is an ObjectStore over the fixture's chunk ConfigMaps, keyed as the operator keys
// objects: it serves only keys the reader built from its own namespace and filter.
type chunkObjects struct {
	c    *cluster
	mu   sync.Mutex // chunks are fetched in parallel
	gets []string
}

func (o *chunkObjects) Prefix() string { return "bloom" }

func (o *chunkObjects) Get(_ context.Context, key string, size int) ([]byte, error) {
	o.mu.Lock()
	o.gets = append(o.gets, key)
	o.mu.Unlock()
	for name, cm := range o.c.maps {
		data, ok := cm.BinaryData[ChunkKey]
		if !ok {
			continue
		}
		raw, _ := base64.StdEncoding.DecodeString(data)
		if k, _ := ObjectKey("bloom", o.c.namespace, "ids", name, sha(raw)); k == key {
			return raw[:min(size, len(raw))], nil
		}
	}
	return nil, nil
}

func TestLoadsWholeAndDeltaFromAnObjectStore(t *testing.T) {
	objects := &chunkObjects{}
	fx := setup(t, KeyString, false, func(c *Config) {
		c.ObjectStores = map[string]ObjectStore{"primary": objects}
	})
	objects.c = fx.c
	inStore := func(m *jsonManifest) *jsonManifest { m.Store = "primary"; return m }
	fx.pub.announce(t, inStore(fx.pub.whole(1, keysFilter(LayoutGuava, "a", "b"))))
	fx.c.gets = nil
	fx.sync(t, Loaded, "")
	if len(fx.c.gets) != 1 || len(objects.gets) != len(fx.pub.last.Chunks) {
		t.Fatalf("ConfigMap GETs %v, object GETs %v: chunks must come from the store", fx.c.gets, objects.gets)
	}
	for _, key := range objects.gets {
		if !strings.HasPrefix(key, "bloom/"+ns+"/ids/ids-bloom-v1-") {
			t.Fatalf("key %s outside the filter's directory", key)
		}
	}
	objects.gets = nil
	fx.pub.announce(t, inStore(fx.pub.delta(2, keysFilter(LayoutGuava, "a", "c"))))
	fx.sync(t, Loaded, "")
	if !fx.r.MightContain("c") || len(objects.gets) == 0 || !strings.Contains(objects.gets[0], "-v2-d0.") {
		t.Fatalf("delta: object GETs %v", objects.gets)
	}

	// Another reader knows the store under another name: refused before any GET, naming both.
	other := setup(t, KeyString, false, func(c *Config) {
		c.ObjectStores = map[string]ObjectStore{"secondary": objects, "archive": objects}
	})
	other.c.maps = fx.c.maps
	objects.gets = nil
	res := other.sync(t, Refused, ReasonUnknownStore)
	if !strings.Contains(res.Err.Error(), "'primary'") || !strings.Contains(res.Err.Error(), "[archive, secondary]") ||
		len(objects.gets) != 0 {
		t.Fatalf("%v; object GETs %v", res.Err, objects.gets)
	}
}
