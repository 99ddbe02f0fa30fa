# Sourced, not run, by the hack scripts that use the test cluster's binaries
# (build-kube-binaries.sh builds them, local-cluster.sh runs them), so both read the pinned
# releases and find the binaries the same way.
# Sets: KUBE_VERSION, ETCD_VERSION (hack/kube-versions.env unless set in the environment),
# BLOOM_OS_ARCH (hack/platform.sh) and KUBE_SERVER_BIN, the directory of kube-apiserver,
# kube-controller-manager, etcd and kubectl under kube-api-test's directory.
_KUBE_VERSIONS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$_KUBE_VERSIONS_DIR/platform.sh"
KUBE_VERSION="${KUBE_VERSION:-$(sed -n 's/^KUBE_VERSION=//p' "$_KUBE_VERSIONS_DIR/kube-versions.env")}"
ETCD_VERSION="${ETCD_VERSION:-$(sed -n 's/^ETCD_VERSION=//p' "$_KUBE_VERSIONS_DIR/kube-versions.env")}"
KUBE_SERVER_BIN="${KUBE_API_TEST_DIR:-$HOME/.kubeapitest}/k8s/${KUBE_VERSION}-${BLOOM_OS_ARCH}"
