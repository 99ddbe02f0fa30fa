#!/usr/bin/env bash
# Builds go-containerregistry's `crane` from its Go module, for the image tests: they read the
# operator's image tarball (operator/target/bloom-operator-image.tar) as a registry client would
# (`crane manifest/config --platform`, `crane export`) and start the operator from its layers.
#
# Why a build: release binaries come from GitHub, which this project's machines cannot reach; the
# Go module proxy is reachable (as hack/build-promtool.sh and hack/build-helm.sh do).
#
# Idempotent: when the binary exists and records the version it was built from it does nothing.
# Prints the binary's path on its last line; `--path` prints it without building (the tests use
# it to find the binary, so the version is written only here).
# Environment:
#   CRANE_MODULE_VERSION  github.com/google/go-containerregistry version (default below)
#   BLOOM_TOOLS_DIR       where tools are kept (default ~/.cache/bloom-operator/tools)
set -euo pipefail

VERSION="${CRANE_MODULE_VERSION:-v0.22.1}"
DIR="${BLOOM_TOOLS_DIR:-$HOME/.cache/bloom-operator/tools}/crane-$VERSION"
BIN="$DIR/crane"
STAMP="$DIR/.built-from"
WANT="github.com/google/go-containerregistry $VERSION"

if [ "${1:-}" = "--path" ]; then
  echo "$BIN"
  exit 0
fi
if [ -x "$BIN" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
  echo "crane: already built ($WANT)" >&2
  echo "$BIN"
  exit 0
fi
if ! command -v go >/dev/null; then
  # Not fatal here, like hack/build-helm.sh: the image tests fail later naming this script.
  echo "crane: WARNING: Go is not installed, cannot build $BIN (install Go >= 1.25)" >&2
  exit 0
fi

echo "crane: building $WANT into $DIR" >&2
mkdir -p "$DIR"
# cmd/crane is a package of the main module, which has no replace directives: `go install
# module@version` builds exactly the released sources with the module's own go.sum.
CGO_ENABLED=0 GOBIN="$DIR" GOFLAGS="${GOFLAGS:-} -trimpath" \
  go install "github.com/google/go-containerregistry/cmd/crane@$VERSION"
echo "$WANT" > "$STAMP"
"$BIN" version >&2
echo "$BIN"
