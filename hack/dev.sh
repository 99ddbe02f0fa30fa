#!/usr/bin/env bash
# Embedded dev mode: builds what is needed, then runs a real kube-apiserver + etcd locally with the
# operator reconciling the examples/ resources. Prints the kubectl commands to try; Ctrl-C stops all.
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/platform.sh
if [ "${BLOOM_KUBE_DOWNLOAD:-}" != "true" ]; then
  bash hack/build-kube-binaries.sh
fi
# Dev mode runs the operator in-process: the image (docs/image.md) is not needed.
mvn -B -q install -DskipTests -DskipImage
# DevMode lives in the operator's tests; it runs in a JVM of its own on exactly the operator's test
# class path (Logback is its only SLF4J backend), not inside Maven's JVM through exec:java, where
# Maven's own SLF4J binding is visible too and SLF4J warns about several providers.
mvn -B -q -pl operator org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath \
  -Dmdep.includeScope=test -Dmdep.outputFile=target/dev-classpath.txt
exec java -cp "operator/target/test-classes:operator/target/classes:$(cat operator/target/dev-classpath.txt)" \
  -Dbloom.repoRoot="$PWD" io.bloomoperator.dev.DevMode
