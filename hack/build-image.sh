#!/usr/bin/env bash
# Builds the operator's OCI image without a container engine, a registry or a base-image download:
#   operator/target/bloom-operator-image.tar    (an OCI image layout, tarred; docs/image.md)
# FROM scratch: the Java runtime layer from hack/build-java-rootfs.sh, then Jib's layers of the
# operator's jars and classes. Reproducible: the same sources and JDK give the same bytes.
#
# Usage: bash hack/build-image.sh [--multiarch] [--push REFERENCE] [extra mvn arguments]
#   --multiarch        also operator/target/bloom-operator-image-multiarch.tar: one image for
#                      linux/amd64 and linux/arm64 (an image index), each platform's Java runtime
#                      linked from Debian packages fetched for it (docs/image.md, "Platforms");
#                      --push then pushes that index
#   --push REFERENCE   then push it with crane (hack/build-crane.sh), e.g. registry.example/bloom-operator:0.1.0;
#                      credentials as for any registry client (~/.docker/config.json)
# The image is named as operator/pom.xml says (image.repository, -Dimage.repository=... for another)
# with the project version as its tag; `mvn verify` builds the same tarball before testing it.
set -euo pipefail
cd "$(dirname "$0")/.."

push=""
multiarch=false
while [ $# -gt 0 ]; do
  case "$1" in
    --multiarch) multiarch=true; shift ;;
    --push) push="${2:?--push needs an image reference}"; shift 2 ;;
    *) break ;;
  esac
done

start=$(date +%s)
tarball=operator/target/bloom-operator-image.tar
profile=()
if $multiarch; then
  profile=(-Pmultiarch)
fi
# -DskipTests: no tests, so no test binaries either; the image is built in pre-integration-test.
mvn -B -q -pl operator -am -DskipTests "${profile[@]}" verify "$@"
ref="$(tar -xOf "$tarball" index.json | sed -n 's/.*"org.opencontainers.image.ref.name":"\([^"]*\)".*/\1/p')"
echo "image: $ref"
if $multiarch; then
  echo "  $tarball: linux/amd64, the build machine's JDK; $(du -h "$tarball" | cut -f1)"
  for t in operator/target/bloom-operator-image-linux-{amd64,arm64}.tar; do
    echo "  $t: $(du -h "$t" | cut -f1)"
  done
  tarball=operator/target/bloom-operator-image-multiarch.tar
fi
echo "  $tarball: $(du -h "$tarball" | cut -f1), sha256 $(sha256sum "$tarball" | cut -c1-64), built in $(( $(date +%s) - start ))s"

if [ -n "$push" ]; then
  crane="$(bash hack/build-crane.sh | tail -1)"
  layout=operator/target/image-layout
  rm -rf "$layout" && mkdir -p "$layout" && tar -xf "$tarball" -C "$layout"
  "$crane" push "$layout" "$push"
fi
