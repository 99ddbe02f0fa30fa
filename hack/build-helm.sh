#!/usr/bin/env bash
# Builds the helm CLI from the helm.sh/helm/v3 Go module for the chart tests:
#   $BLOOM_HELM_DIR/<version>/helm      (default ~/.cache/bloom-operator/helm/<version>/helm)
#
# Why: release binaries are downloads this project's machines cannot reach; the Go module proxy is
# reachable, so we compile the released sources instead (as hack/build-kube-binaries.sh does).
#
# Idempotent: when the binary is present and records the version it was built from it does nothing.
# Environment:
#   HELM_VERSION     Helm release to build (default: hack/helm-version.env)
#   BLOOM_HELM_DIR   where built versions live (default ~/.cache/bloom-operator/helm)
#   BLOOM_HELM       a helm binary to use instead: nothing is built
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
. "$HERE/platform.sh"
HELM_VERSION="${HELM_VERSION:-$(sed -n 's/^HELM_VERSION=//p' "$HERE/helm-version.env")}"
TARGET="${BLOOM_HELM_DIR:-$HOME/.cache/bloom-operator/helm}/${HELM_VERSION}"
STAMP="$TARGET/.built-from"
WANT_STAMP="helm.sh/helm/v3 v${HELM_VERSION}"

if [ -n "${BLOOM_HELM:-}" ]; then
  echo "helm: not built (BLOOM_HELM=$BLOOM_HELM is used)"
  exit 0
fi

if [ -x "$TARGET/helm" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT_STAMP" ]; then
  echo "helm: already built in $TARGET ($WANT_STAMP); nothing to do"
  exit 0
fi

if ! command -v go >/dev/null; then
  # Not fatal here (a build with -DskipTests needs no helm); the chart tests fail later with a
  # message naming this script.
  echo "helm: WARNING: Go is not installed, cannot build $TARGET/helm" >&2
  exit 0
fi

WORK="${HELM_BUILD_WORK:-$HOME/.cache/bloom-operator/helm-src}"
mkdir -p "$WORK" "$TARGET"
export CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -trimpath"
echo "helm: building $WANT_STAMP into $TARGET"

cd "$WORK"
if [ ! -f go.mod ] || ! grep -q "helm.sh/helm/v3 v${HELM_VERSION}" go.mod; then
  rm -f go.mod go.sum
  go mod init bloomoperator.io/hack/helm >/dev/null 2>&1
  modfile="$(go mod download -json "helm.sh/helm/v3@v${HELM_VERSION}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  go mod edit -go="$(sed -n 's/^go \(.*\)$/\1/p' "$modfile" | head -1)"
  go mod edit -require="helm.sh/helm/v3@v${HELM_VERSION}"
  cat > tools.go <<'GO'
//go:build tools

// Package tools pins the command this module builds.
package tools

import _ "helm.sh/helm/v3/cmd/helm"
GO
  go mod tidy
fi

# As helm's Makefile does: the version it reports, and the Kubernetes version `helm template` and
# `helm lint` assume without a cluster (that of the client-go it is built with).
k8s_minor="$(go list -m -f '{{.Version}}' k8s.io/client-go | sed -n 's/^v0\.\([0-9]*\)\..*/\1/p')"
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=v${HELM_VERSION}"
ldflags+=" -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for pkg in pkg/lint/rules pkg/chartutil; do
  ldflags+=" -X helm.sh/helm/v3/${pkg}.k8sVersionMajor=1 -X helm.sh/helm/v3/${pkg}.k8sVersionMinor=${k8s_minor}"
done
go build -ldflags "$ldflags" -o "$TARGET/helm" helm.sh/helm/v3/cmd/helm
echo "$WANT_STAMP" > "$STAMP"
echo "helm: done"
"$TARGET/helm" version
