#!/usr/bin/env bash
# Builds the Kubernetes test binaries (kube-apiserver, kube-controller-manager, etcd) from Go
# modules and lays them out the way fabric8 kube-api-test expects:
#   $KUBE_API_TEST_DIR/k8s/<k8s-version>-linux-<amd64|arm64>/{kube-apiserver,kube-controller-manager,etcd,kubectl}
#
# Why: kube-api-test normally downloads release binaries, which this project's CI machines cannot
# reach; the Go module proxy is reachable, so we compile the same released sources instead.
#
# Idempotent: when every binary is present (and records the version it was built from) it does nothing.
# Environment:
#   KUBE_VERSION        Kubernetes release to build (default: hack/kube-versions.env; its staging
#                       modules are v0.<minor>.<patch>)
#   ETCD_VERSION        etcd release (default: hack/kube-versions.env)
#   KUBE_API_TEST_DIR   kube-api-test's directory (default ~/.kubeapitest, kube-api-test's own default)
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
. "$HERE/kube-versions.sh"
OS_ARCH="$BLOOM_OS_ARCH"
TARGET="$KUBE_SERVER_BIN"
STAMP="$TARGET/.built-from"
WANT_STAMP="kubernetes v${KUBE_VERSION} etcd v${ETCD_VERSION}"

have_all() {
  for b in kube-apiserver kube-controller-manager etcd kubectl; do
    [ -x "$TARGET/$b" ] || return 1
  done
  [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT_STAMP" ]
}

if [ -n "${BLOOM_TEST_KUBECONFIG:-}" ] || [ "${BLOOM_KUBE_DOWNLOAD:-}" = "true" ]; then
  echo "kube binaries: not needed (BLOOM_TEST_KUBECONFIG or BLOOM_KUBE_DOWNLOAD is set)"
  exit 0
fi

if have_all; then
  echo "kube binaries: already built in $TARGET ($WANT_STAMP); nothing to do"
  exit 0
fi

if ! command -v go >/dev/null; then
  # Not fatal here (a build with -DskipTests needs no binaries); the real-Kubernetes tests fail
  # later with a message naming this script.
  echo "kube binaries: WARNING: Go is not installed, cannot build $TARGET" >&2
  exit 0
fi

WORK="${KUBE_BINARIES_WORK:-$HOME/.cache/bloom-operator/kube-binaries-src}"
mkdir -p "$WORK" "$TARGET"
export CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -trimpath"

minor_patch="${KUBE_VERSION#*.}"   # 35.4 -> staging modules are v0.35.4
staging_version="v0.${minor_patch}"

echo "kube binaries: building Kubernetes v${KUBE_VERSION} (staging ${staging_version}) and etcd v${ETCD_VERSION} into $TARGET"

# --- kube-apiserver and kube-controller-manager -------------------------------------------------
# k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them with local paths that
# only exist in its own repository. A consumer module must replace each with its published version.
K8S="$WORK/kubernetes"
mkdir -p "$K8S"
cd "$K8S"
if [ ! -f go.mod ] || ! grep -q "k8s.io/kubernetes v${KUBE_VERSION}" go.mod; then
  rm -f go.mod go.sum
  go mod init bloomoperator.io/hack/kube-binaries >/dev/null 2>&1
  modfile="$(go mod download -json "k8s.io/kubernetes@v${KUBE_VERSION}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  go_directive="$(sed -n 's/^go \(.*\)$/\1/p' "$modfile" | head -1)"
  go mod edit -go="$go_directive"
  go mod edit -require="k8s.io/kubernetes@v${KUBE_VERSION}"
  for m in $(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$modfile"); do
    go mod edit -replace="${m}=${m}@${staging_version}"
  done
  cat > tools.go <<'GO'
//go:build tools

// Package tools pins the commands this module builds.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubectl/pkg/cmd"
)
GO
  go mod tidy
fi
go build -o "$TARGET/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
go build -o "$TARGET/kube-controller-manager" k8s.io/kubernetes/cmd/kube-controller-manager

# --- etcd ------------------------------------------------------------------------------------------
ETCD="$WORK/etcd"
mkdir -p "$ETCD"
cp "$HERE/kube-binaries/etcd/main.go" "$ETCD/main.go"
cd "$ETCD"
if [ ! -f go.mod ] || ! grep -q "go.etcd.io/etcd/server/v3 v${ETCD_VERSION}" go.mod; then
  rm -f go.mod go.sum
  go mod init bloomoperator.io/hack/etcd >/dev/null 2>&1
  go mod edit -require="go.etcd.io/etcd/server/v3@v${ETCD_VERSION}"
  go mod tidy
fi
go build -o "$TARGET/etcd" .

# kube-api-test also wants a kubectl beside the server binaries: the installed one if there is
# one, else the matching release built from the same module set.
if command -v kubectl >/dev/null; then
  cp "$(command -v kubectl)" "$TARGET/kubectl"
else
  (cd "$K8S" && go build -o "$TARGET/kubectl" k8s.io/kubernetes/cmd/kubectl)
fi
echo "$WANT_STAMP" > "$STAMP"
echo "kube binaries: done"
ls -la "$TARGET"
