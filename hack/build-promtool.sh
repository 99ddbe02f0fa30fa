#!/usr/bin/env bash
# Builds Prometheus' promtool from the github.com/prometheus/prometheus Go module, so the alert rules
# in deploy/monitoring/ are checked by the same parser Prometheus uses (`promtool check rules`).
#
# Why a build: release tarballs come from GitHub, which CI machines cannot reach; the Go module
# proxy is reachable. The service-discovery plugins are left out (-tags remove_all_sd): promtool's
# rule checks do not need them and they are most of the compile time.
#
# Idempotent: when the binary exists and records the version it was built from it does nothing.
# Prints the binary's path on its last line; `--path` prints it without building (tests use it
# to find the binary, so the version is written only here).
# Environment:
#   PROMETHEUS_MODULE_VERSION  module version to build (default below)
#   BLOOM_TOOLS_DIR            where tools are kept (default ~/.cache/bloom-operator/tools)
set -euo pipefail
. "$(dirname "$0")/platform.sh"

VERSION="${PROMETHEUS_MODULE_VERSION:-v0.316.0}"
DIR="${BLOOM_TOOLS_DIR:-$HOME/.cache/bloom-operator/tools}/promtool-$VERSION"
BIN="$DIR/promtool"
STAMP="$DIR/.built-from"
WANT="github.com/prometheus/prometheus $VERSION remove_all_sd"

if [ "${1:-}" = "--path" ]; then
  echo "$BIN"
  exit 0
fi
if [ -x "$BIN" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
  echo "promtool: already built ($WANT)" >&2
  echo "$BIN"
  exit 0
fi
if ! command -v go >/dev/null; then
  # Not fatal here (a build with -DskipTests needs no promtool); MonitoringRulesTest fails later
  # with a message naming this script.
  echo "promtool: WARNING: Go is not installed, cannot build $BIN (install Go >= 1.25)" >&2
  echo "$BIN"
  exit 0
fi

echo "promtool: building $WANT into $DIR" >&2
mkdir -p "$DIR"
# The module has no replace directives, so `go install module@version` builds exactly the
# released sources with the module's own go.sum.
CGO_ENABLED=0 GOBIN="$DIR" go install -trimpath -tags remove_all_sd \
  "github.com/prometheus/prometheus/cmd/promtool@$VERSION"
echo "$WANT" > "$STAMP"
"$BIN" --version >&2
echo "$BIN"
