package reader

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ObjectStore is an object store a reader fetches chunks from when a manifest names it, set in
// Config.ObjectStores under that name (the name the operator's BloomStore has). Where the store is
// (endpoint, bucket) and the credentials to read it come from the application, never from a
// manifest, which names only the store. S3Store is the implementation for S3-compatible stores.
//
// The reader builds every object key itself (ObjectKey: the store's Prefix, its own namespace and
// filter, each chunk's name and digest) and refuses a manifest naming a chunk with no such key
// before anything is fetched; the store reads only the keys it is given, and the reader verifies
// each object's size and SHA-256 as for ConfigMaps. Implementations are called from the reader's
// Sync/Offer, up to Config.FetchParallelism calls at once per reader, and may be shared by readers:
// they must be safe for concurrent use.
type ObjectStore interface {
	// Prefix is the key prefix of the store's objects, as the operator's store has it ("" for none).
	Prefix() string
	// Get returns exactly size bytes of the object key, or nil (and no error) when it does not
	// exist. It never reads more than size bytes. Errors carry a Reason through *Error
	// (STORE_DENIED, STORE_UNAVAILABLE, CHUNK for an object of another size); others count as
	// STORE_UNAVAILABLE.
	Get(ctx context.Context, key string, size int) ([]byte, error)
}

// storeSegment is a chunk name (or namespace, filter name) as it may appear in an object key:
// io.bloomoperator.snapshot.StoreObjectKeys' alphabet, one path segment.
var storeSegment = regexp.MustCompile(`^[a-z0-9]([-.a-z0-9]*[a-z0-9])?$`)

// storePrefix is a store prefix: '/'-separated segments, as StoreObjectKeys.isStorePrefix.
var storePrefix = regexp.MustCompile(`^[a-zA-Z0-9_][-._a-zA-Z0-9]*(/[a-zA-Z0-9_][-._a-zA-Z0-9]*)*$`)

// maxObjectNameLength is SnapshotNames.MAX_NAME_LENGTH, the longest segment a key may have.
const maxObjectNameLength = 253

// IsStorePrefix reports whether prefix may prefix a store's keys: empty, or '/'-separated plain
// segments without "..".
func IsStorePrefix(prefix string) bool {
	return prefix == "" || (storePrefix.MatchString(prefix) && !strings.Contains(prefix, ".."))
}

func isKeySegment(s string) bool {
	return len(s) <= maxObjectNameLength && !strings.Contains(s, "..") && storeSegment.MatchString(s)
}

// ObjectKey is the key of chunk chunkName with digest sha256 of filter in namespace, in a store
// whose keys start with prefix: <prefix>/<namespace>/<filter>/<chunk name>.<sha256 lower-case>,
// exactly as io.bloomoperator.snapshot.StoreObjectKeys builds it for the operator. An error for a
// prefix, namespace, filter or chunk name that could leave the filter's directory, or a digest
// that is not 64 hex digits.
func ObjectKey(prefix, namespace, filter, chunkName, sha256 string) (string, error) {
	if !IsStorePrefix(prefix) {
		return "", fmt.Errorf("not a store prefix")
	}
	for _, s := range [][2]string{{"namespace", namespace}, {"filter name", filter}, {"chunk name", chunkName}} {
		if !isKeySegment(s[1]) {
			return "", fmt.Errorf("%s is not a plain path segment", s[0])
		}
	}
	if !isHex64(sha256) {
		return "", fmt.Errorf("chunk digest is not 64 hex digits")
	}
	dir := namespace + "/" + filter + "/"
	if prefix != "" {
		dir = prefix + "/" + dir
	}
	return dir + chunkName + "." + strings.ToLower(sha256), nil
}

// storeChunks is the chunk source of a manifest whose chunks are in store: every key is built
// (and a manifest naming a chunk without one refused, FOREIGN_CHUNK) before anything is fetched.
func storeChunks(store ObjectStore, namespace, filter string, m *Manifest) (chunkSource, error) {
	refs := append([]ChunkRef(nil), m.Chunks...)
	if m.Chain != nil {
		for _, d := range m.Chain.Deltas {
			refs = append(refs, d.Chunks...)
		}
	}
	keys := make(map[ChunkRef]string, len(refs))
	for i, ref := range refs {
		key, err := ObjectKey(store.Prefix(), namespace, filter, ref.Name, ref.SHA256)
		if err != nil {
			// Not quoted: the name is whatever the manifest's writer put there.
			return nil, newError(ReasonForeignChunk, fmt.Sprintf(
				"manifest of '%s' v%d: chunk %d has no object key in the filter's directory (%v)",
				filter, m.Version, i, err))
		}
		keys[ref] = key
	}
	return func(ctx context.Context, ref ChunkRef) ([]byte, error) {
		key, ok := keys[ref]
		if !ok {
			return nil, newError(ReasonChunk, "chunk '"+ref.Name+"' is not one the manifest lists")
		}
		if ref.Bytes < 0 || ref.Bytes > MaxChunkBytes {
			// The limits refuse such manifests first; never allocate what a chunk cannot hold.
			return nil, newError(ReasonChunk, fmt.Sprintf("chunk '%s' announces more than %d bytes", ref.Name, MaxChunkBytes))
		}
		data, err := store.Get(ctx, key, int(ref.Bytes))
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				return nil, err
			}
			return nil, &Error{Reason: ReasonStoreUnavailable, Chunk: -1, msg: printable(err.Error()), cause: err}
		}
		if data != nil && len(data) != int(ref.Bytes) {
			return nil, newError(ReasonChunk, fmt.Sprintf("object store returned %d bytes of chunk '%s', the manifest announces %d",
				len(data), ref.Name, ref.Bytes))
		}
		return data, nil
	}, nil
}
