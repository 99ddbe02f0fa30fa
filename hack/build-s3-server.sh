#!/usr/bin/env bash
# Builds versitygw, an S3-compatible gateway (Apache-2.0), from its Go module, for the tests of the
# object-store snapshot transport: they start it with its POSIX backend (buckets are directories
# of a temporary directory, object metadata in extended attributes) on a loopback port, so the
# S3 client is tested against a real S3 server rather than a mock of the SDK.
#
# Why versitygw: a maintained gateway whose POSIX backend needs no other service, built from the
# Go module proxy (release binaries come from GitHub, which this project's machines cannot
# reach). MinIO is not used: its licence (AGPL-3.0) does not fit.
#
# Idempotent: when the binary exists and records the version it was built from it does nothing.
# Prints the binary's path on its last line; `--path` prints it without building (the tests use
# it to find the binary, so the version is written only here).
# Environment:
#   VERSITYGW_MODULE_VERSION  github.com/versity/versitygw version (default below)
#   BLOOM_TOOLS_DIR           where tools are kept (default ~/.cache/bloom-operator/tools)
set -euo pipefail

VERSION="${VERSITYGW_MODULE_VERSION:-v1.8.0}"
DIR="${BLOOM_TOOLS_DIR:-$HOME/.cache/bloom-operator/tools}/versitygw-$VERSION"
BIN="$DIR/versitygw"
STAMP="$DIR/.built-from"
WANT="github.com/versity/versitygw $VERSION"

if [ "${1:-}" = "--path" ]; then
  echo "$BIN"
  exit 0
fi
if [ -x "$BIN" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
  echo "versitygw: already built ($WANT)" >&2
  echo "$BIN"
  exit 0
fi
if ! command -v go >/dev/null; then
  # Not fatal here, like hack/build-crane.sh: the object-store tests fail later naming this script.
  echo "versitygw: WARNING: Go is not installed, cannot build $BIN (install Go >= 1.25)" >&2
  exit 0
fi

echo "versitygw: building $WANT into $DIR" >&2
mkdir -p "$DIR"
# cmd/versitygw is a package of the main module, which has no replace directives: `go install
# module@version` builds exactly the released sources with the module's own go.sum.
CGO_ENABLED=0 GOBIN="$DIR" GOFLAGS="${GOFLAGS:-} -trimpath" \
  go install "github.com/versity/versitygw/cmd/versitygw@$VERSION"
echo "$WANT" > "$STAMP"
"$BIN" --version >&2
echo "$BIN"
