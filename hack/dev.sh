#!/usr/bin/env bash
# Embedded dev mode: builds what is needed, then runs a real kube-apiserver + etcd locally with the
# operator reconciling the examples/ resources. Prints the kubectl commands to try; Ctrl-C stops all.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${BLOOM_KUBE_DOWNLOAD:-}" != "true" ]; then
  bash hack/build-kube-binaries.sh
fi
# Dev mode runs the operator in-process: the image (docs/image.md) is not needed.
mvn -B -q install -DskipTests -DskipImage
exec mvn -B -q -pl operator exec:java -Dexec.mainClass=io.bloomoperator.dev.DevMode \
  -Dexec.classpathScope=test -Dexec.cleanupDaemonThreads=false \
  -Dbloom.repoRoot="$PWD"
