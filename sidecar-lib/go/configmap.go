package reader

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// ConfigMap is the part of a Kubernetes ConfigMap a reader uses, with the JSON field names of the
// API, so the body of a GET decodes into it directly. BinaryData keeps the Base64 text as the
// API server sends it: a chunk's length is checked before it is decoded, so a replaced chunk
// cannot make the reader allocate more than its manifest announced.
type ConfigMap struct {
	Metadata   ObjectMeta        `json:"metadata"`
	Data       map[string]string `json:"data,omitempty"`
	BinaryData map[string]string `json:"binaryData,omitempty"`
}

// ObjectMeta is the part of a ConfigMap's metadata a reader may look at (it finds objects by name
// only; labels and annotations are carried for tools).
type ObjectMeta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ErrNotFound is what a ConfigMapGetter returns (possibly wrapped) for a ConfigMap that does not
// exist.
var ErrNotFound = errors.New("configmap not found")

// ConfigMapGetter reads one ConfigMap by namespace and name: the reader's only access to the
// cluster. Implementations return an error wrapping ErrNotFound when it does not exist; any
// other error is reported with reason API. A reader calls it for up to Config.FetchParallelism
// chunks at once: implementations must be safe for concurrent use. Package kube has the client-go one (kube.ConfigMaps:
// the raw body of a GET unmarshalled into ConfigMap, keeping binaryData as text).
type ConfigMapGetter interface {
	GetConfigMap(ctx context.Context, namespace, name string) (*ConfigMap, error)
}

// ConfigMapGetterFunc adapts a function to ConfigMapGetter.
type ConfigMapGetterFunc func(ctx context.Context, namespace, name string) (*ConfigMap, error)

// GetConfigMap calls f.
func (f ConfigMapGetterFunc) GetConfigMap(ctx context.Context, namespace, name string) (*ConfigMap, error) {
	return f(ctx, namespace, name)
}

// chunkBytes decodes a chunk ConfigMap announced as expected bytes, after checking the Base64
// length (4 * ceil(n / 3)); size and digest are the decoder's to check.
func chunkBytes(cm *ConfigMap, expected int32, where string) ([]byte, error) {
	text, ok := cm.BinaryData[ChunkKey]
	if !ok {
		return nil, newError(ReasonChunk, fmt.Sprintf("%s has no binaryData key '%s'", where, ChunkKey))
	}
	want := 4 * ((int64(expected) + 2) / 3)
	if int64(len(text)) != want {
		return nil, newError(ReasonChunk, fmt.Sprintf(
			"%s holds %d base64 characters, the manifest announces %d bytes (%d characters)",
			where, len(text), expected, want))
	}
	// Go's decoder skips line breaks, which are not Base64 (and which Java's decoder refuses).
	if strings.ContainsAny(text, "\r\n") {
		return nil, newError(ReasonChunk, where+" is not valid base64")
	}
	data, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return nil, newError(ReasonChunk, where+" is not valid base64")
	}
	return data, nil
}

// configMapChunks reads chunks through getter: one GET by name per chunk (fetchChunks decides how
// many at once and bounds what is held); a missing chunk is nil.
func configMapChunks(getter ConfigMapGetter, namespace string) chunkSource {
	return func(ctx context.Context, ref ChunkRef) ([]byte, error) {
		cm, err := getter.GetConfigMap(ctx, namespace, ref.Name)
		if errors.Is(err, ErrNotFound) || (err == nil && cm == nil) {
			return nil, nil
		}
		if err != nil {
			return nil, &Error{Reason: ReasonAPI, Chunk: -1,
				msg: printable(fmt.Sprintf("GET chunk ConfigMap %s/%s: %v", namespace, ref.Name, err)), cause: err}
		}
		return chunkBytes(cm, ref.Bytes, "chunk ConfigMap "+namespace+"/"+ref.Name)
	}
}
