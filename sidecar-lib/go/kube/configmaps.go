// Package kube follows a filter on a Kubernetes API server with client-go: an informer on the
// manifest ConfigMap feeds the reader (package reader), chunks are read one GET per name, and the
// pod's reader report (a Lease, docs/reader-protocol.md) tells the operator which version it
// serves.
//
// It is a package of its own so that the reader core stays free of client-go: applications that
// bring their own ConfigMapGetter never compile it.
package kube

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"bloomoperator.io/reader"
)

// ConfigMaps is a reader.ConfigMapGetter over the core/v1 REST client: one GET by name per call
// (a chunk is never found by listing). The body is decoded into reader.ConfigMap directly, so
// binaryData stays Base64 text until the reader has checked its length against the manifest; the
// API server bounds the body (an object is at most about 1.5 MiB).
type ConfigMaps struct {
	client rest.Interface
}

// NewConfigMaps returns a getter over client, the REST client of core/v1 (e.g.
// clientset.CoreV1().RESTClient()).
func NewConfigMaps(client rest.Interface) *ConfigMaps { return &ConfigMaps{client: client} }

// GetConfigMap reads one ConfigMap; one that does not exist is reader.ErrNotFound.
func (c *ConfigMaps) GetConfigMap(ctx context.Context, namespace, name string) (*reader.ConfigMap, error) {
	body, err := c.client.Get().Namespace(namespace).Resource("configmaps").Name(name).Do(ctx).Raw()
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%s/%s: %w", namespace, name, reader.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	var cm reader.ConfigMap
	if err := json.Unmarshal(body, &cm); err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s: %w", namespace, name, err)
	}
	return &cm, nil
}
