#!/usr/bin/env bash
# Builds krew, the kubectl plugin manager, from the sigs.k8s.io/krew Go module, so the release test
# (ReleaseArtifactsPackagedJarTest) installs the plugin through the krew manifest hack/release.sh
# writes, as a user's `kubectl krew install` would.
#
# Why a build: krew's release archives come from GitHub, which CI machines cannot reach; the Go
# module proxy is reachable. The module has no replace directives, so `go install module@version`
# builds exactly the released sources with the module's own go.sum.
#
# Idempotent: when the binary exists and records the version it was built from it does nothing.
# Prints the binary's path on its last line; `--path` prints it without building (tests use it to
# find the binary, so the version is written only here).
# Environment:
#   KREW_MODULE_VERSION  module version to build (default below)
#   BLOOM_TOOLS_DIR      where tools are kept (default ~/.cache/bloom-operator/tools)
set -euo pipefail
. "$(dirname "$0")/platform.sh"

VERSION="${KREW_MODULE_VERSION:-v0.4.3}"
DIR="${BLOOM_TOOLS_DIR:-$HOME/.cache/bloom-operator/tools}/krew-$VERSION"
BIN="$DIR/krew"
STAMP="$DIR/.built-from"
WANT="sigs.k8s.io/krew $VERSION"

if [ "${1:-}" = "--path" ]; then
  echo "$BIN"
  exit 0
fi
if [ -x "$BIN" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
  echo "krew: already built ($WANT)" >&2
  echo "$BIN"
  exit 0
fi
if ! command -v go >/dev/null; then
  # Not fatal here (a build with -DskipTests needs no krew); the release test fails later with a
  # message naming this script.
  echo "krew: WARNING: Go is not installed, cannot build $BIN (install Go >= 1.25)" >&2
  echo "$BIN"
  exit 0
fi

echo "krew: building $WANT into $DIR" >&2
mkdir -p "$DIR"
# The version `kubectl krew version` reports, as krew's own release build stamps it. A stamped
# build may check GitHub for a newer krew in the background (never fatal, and never when
# KREW_NO_UPGRADE_CHECK is set, as the tests set it).
CGO_ENABLED=0 GOBIN="$DIR" go install -trimpath \
  -ldflags "-s -w -X sigs.k8s.io/krew/internal/version.gitTag=$VERSION" \
  "sigs.k8s.io/krew/cmd/krew@$VERSION"
echo "$WANT" > "$STAMP"
# krew creates its directories on every run: a throw-away root, not ~/.krew.
root="$(mktemp -d)"
KREW_ROOT="$root" KREW_NO_UPGRADE_CHECK=1 "$BIN" version >&2 || true
rm -rf "$root"
echo "$BIN"
