#!/usr/bin/env bash
# Builds the operator's OCI image without a container engine, a registry or a base-image download:
#   operator/target/bloom-operator-image.tar    (an OCI image layout, tarred; docs/image.md)
# FROM scratch: the Java runtime layer from hack/build-java-rootfs.sh, then Jib's layers of the
# operator's jars and classes. Reproducible: the same sources and JDK give the same bytes.
#
# Usage: bash hack/build-image.sh [--push REFERENCE] [extra mvn arguments]
#   --push REFERENCE   then push it with crane (hack/build-crane.sh), e.g. registry.example/bloom-operator:0.1.0;
#                      credentials as for any registry client (~/.docker/config.json)
# The image is named as operator/pom.xml says (image.repository, -Dimage.repository=... for another)
# with the project version as its tag; `mvn verify` builds the same tarball before testing it.
set -euo pipefail
cd "$(dirname "$0")/.."

push=""
if [ "${1:-}" = "--push" ]; then
  push="${2:?--push needs an image reference}"
  shift 2
fi

start=$(date +%s)
# -DskipTests: no tests, so no test binaries either; the image is built in pre-integration-test.
mvn -B -q -pl operator -am -DskipTests verify "$@"
tarball=operator/target/bloom-operator-image.tar
ref="$(tar -xOf "$tarball" index.json | sed -n 's/.*"org.opencontainers.image.ref.name":"\([^"]*\)".*/\1/p')"
echo "image: $ref"
echo "  $tarball: $(du -h "$tarball" | cut -f1), sha256 $(sha256sum "$tarball" | cut -c1-64), built in $(( $(date +%s) - start ))s"

if [ -n "$push" ]; then
  crane="$(bash hack/build-crane.sh | tail -1)"
  layout=operator/target/image-layout
  rm -rf "$layout" && mkdir -p "$layout" && tar -xf "$tarball" -C "$layout"
  "$crane" push "$layout" "$push"
fi
