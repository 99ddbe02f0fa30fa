#!/usr/bin/env bash
# Installs the kubectl plugin: kubectl-bloom and bloom-operator.jar into one directory on PATH.
#   bash deploy/kubectl-plugin/install.sh            # into ~/.local/bin
#   BINDIR=/usr/local/bin bash deploy/kubectl-plugin/install.sh
# From the release archive kubectl-bloom-<version>.tar.gz: bash install.sh (the jar is beside it).
# From kubectl-bloom-<version>-linux-amd64.tar.gz the bundled Java runtime (java/) goes to
# $BINDIR/../lib/kubectl-bloom/java, where kubectl-bloom looks for it.
# Needs the jar: `mvn -B package -DskipTests` (or BLOOM_OPERATOR_JAR=/path/to/bloom-operator.jar).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
bindir="${BINDIR:-$HOME/.local/bin}"
# Beside this script in the release archive (hack/release.sh), else this checkout's build.
jar="${BLOOM_OPERATOR_JAR:-}"
if [ -z "$jar" ]; then
  jar="$here/bloom-operator.jar"
  [ -f "$jar" ] || jar="$here/../../operator/target/bloom-operator.jar"
fi
if [ ! -f "$jar" ]; then
  echo "install.sh: $jar not found; build it first: mvn -B package -DskipTests" >&2
  exit 1
fi
mkdir -p "$bindir"
install -m 0644 "$jar" "$bindir/bloom-operator.jar"
install -m 0755 "$here/kubectl-bloom" "$bindir/kubectl-bloom"
echo "installed $bindir/kubectl-bloom and $bindir/bloom-operator.jar"
if [ -x "$here/java/bin/java" ]; then
  runtime="$bindir/../lib/kubectl-bloom"
  rm -rf "$runtime/java"
  mkdir -p "$runtime"
  cp -R "$here/java" "$runtime/java"
  echo "installed its Java runtime in $(cd "$runtime" && pwd)/java"
fi
case ":$PATH:" in
  *":$bindir:"*) echo "check: kubectl plugin list; kubectl bloom --help" ;;
  *) echo "$bindir is not on PATH; add it: export PATH=\"$bindir:\$PATH\"" ;;
esac
