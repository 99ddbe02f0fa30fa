#!/usr/bin/env bash
# Embedded dev mode: builds what is needed, then runs a real kube-apiserver + etcd locally with the
# operator reconciling the examples/ resources. Prints the kubectl commands to try; Ctrl-C stops all.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${BLOOM_KUBE_DOWNLOAD:-}" != "true" ]; then
  bash hack/build-kube-binaries.sh
fi
mvn -B -q install -DskipTests
exec mvn -B -q -pl operator exec:java -Dexec.mainClass=io.bloomoperator.dev.DevMode \
  -Dexec.classpathScope=test -Dexec.cleanupDaemonThreads=false \
  -Dbloom.repoRoot="$PWD"
