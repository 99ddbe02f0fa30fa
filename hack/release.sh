#!/usr/bin/env bash
# Produces a release's artifacts into one directory from the checked-out commit, without
# downloads once ~/.m2 and the Go module cache hold the build's dependencies (helm is built by
# hack/build-helm.sh):
#   bash hack/release.sh [--no-build] [--only PART,...] [--multiarch] [OUTDIR]
#                                                          (OUTDIR default target/release)
#
#   bloom-operator-image-<version>.tar   the operator image, an OCI layout tarred (docs/image.md)
#   bloom-lookup-sidecar-image-<version>.tar  the lookup sidecar's image, the same way
#   bloom-operator-image-multiarch-<version>.tar  with --multiarch: the operator image for
#                                        linux/amd64 + linux/arm64, an OCI image index (docs/image.md)
#   bloom-operator-<chart version>.tgz   the Helm chart, as `helm package` makes it
#   bloom-operator-crds-<version>.yaml   both CRDs in one file, for `kubectl apply --server-side -f`
#   kubectl-bloom-<version>.tar.gz       the kubectl plugin: kubectl-bloom, bloom-operator.jar,
#                                        install.sh, LICENSE, THIRD-PARTY.txt
#   kubectl-bloom-<version>-linux-amd64.tar.gz  the same with its own Java runtime (java/), for
#                                        linux/amd64 hosts without a JDK
#   kubectl-bloom-<version>.krew.yaml    its krew manifest: the archives at $BLOOM_RELEASE_URL, their sha256
#   bloom-operator-<version>.cdx.json    CycloneDX SBOM of the operator's runtime dependencies
#   maven/                               the library modules and their parent POM in a Maven
#                                        repository layout, each jar with -sources and -javadoc
#   SHA256SUMS                           of every file above (`sha256sum -c SHA256SUMS`)
#
# --multiarch builds (-Pmultiarch) and adds the two-platform operator image; its arm64 Java runtime
# comes from Debian's arm64 packages, fetched once (apt-get download) into the build's cache.
# PARTs: image chart crds plugin sbom maven (default all). --no-build takes what an earlier build
# left in target/ (ReleaseArtifactsPackagedJarTest runs `--no-build --only chart,crds,plugin,sbom`).
# Reproducible: SOURCE_DATE_EPOCH (default: the last commit's time) fixes the archives' mtimes, the
# chart tarball is re-made with it (helm stamps the packaging time), owners are 0/0, gzip stores
# no name or time. docs/release.md says what is and is not byte-for-byte repeatable, and how each
# artifact is published.
# Environment: RELEASE_MVN_ARGS (extra Maven arguments, e.g. -Dimage.repository=...), BLOOM_HELM,
# BLOOM_HELM_DIR, HELM_VERSION (as for hack/build-helm.sh), BLOOM_RELEASE_URL (where the release's
# files will be downloaded from, written into the krew manifest; default the GitHub release
# https://github.com/bloom-operator/bloom-operator/releases/download/v<version>).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

build=true
multiarch=false
parts="image,chart,crds,plugin,sbom,maven"
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) build=false; shift ;;
    --only) parts="${2:?--only needs a list of parts}"; shift 2 ;;
    --multiarch) multiarch=true; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "release.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
out="${1:-target/release}"

export LC_ALL=C TZ=UTC
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
  SOURCE_DATE_EPOCH="$(git log -1 --format=%ct 2>/dev/null)" ||
    { echo "release.sh: not a git checkout: set SOURCE_DATE_EPOCH" >&2; exit 1; }
fi
export SOURCE_DATE_EPOCH
# The parent POM's version: the first <version> at two spaces' indent, before <packaging>.
version="$(sed -n '/<packaging>/q; s|^  <version>\(.*\)</version>$|\1|p' pom.xml)"
[ -n "$version" ] || { echo "release.sh: no version in pom.xml" >&2; exit 1; }
chart_dir=deploy/helm/bloom-operator
release_url="${BLOOM_RELEASE_URL:-https://github.com/bloom-operator/bloom-operator/releases/download/v$version}"
chart_version="$(sed -n 's/^version: *//p' "$chart_dir/Chart.yaml")"
# The library modules published to Maven repositories (the operator ships as image and plugin).
maven_modules=(sidecar-lib/snapshot-format sidecar-lib sidecar-lib/s3 sidecar-lib/spring-boot-starter)

want() { case ",$parts," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
need() {
  [ -f "$1" ] && return
  echo "release.sh: $1 is missing; build first (without --no-build)" >&2
  [ "$1" != operator/target/bom.json ] ||
    echo "  (the SBOM is made by a Maven build without -o: cyclonedx-maven-plugin needs online mode)" >&2
  exit 1
}

# A gzipped tar of the named paths under $1, the same bytes for the same contents: entries in the
# given order, fixed mtime and owners, permissions without group/other write, no gzip timestamp.
fixed_tgz() {
  local base="$1" archive="$2"
  shift 2
  tar -C "$base" --no-recursion --format=gnu --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 \
    --numeric-owner --mode=u+rw,go-w,a+rX -cf - "$@" | gzip -9n >"$archive"
}

release_image() {
  need operator/target/bloom-operator-image.tar
  need sidecar-lib/lookup-sidecar/target/bloom-lookup-sidecar-image.tar
  cp operator/target/bloom-operator-image.tar "$out/bloom-operator-image-$version.tar"
  cp sidecar-lib/lookup-sidecar/target/bloom-lookup-sidecar-image.tar \
    "$out/bloom-lookup-sidecar-image-$version.tar"
  if $multiarch; then
    need operator/target/bloom-operator-image-multiarch.tar
    cp operator/target/bloom-operator-image-multiarch.tar \
      "$out/bloom-operator-image-multiarch-$version.tar"
  fi
}

release_chart() {
  local helm="${BLOOM_HELM:-${BLOOM_HELM_DIR:-$HOME/.cache/bloom-operator/helm}/${HELM_VERSION:-$(sed -n 's/^HELM_VERSION=//p' hack/helm-version.env)}/helm}"
  bash hack/build-helm.sh >&2
  [ -x "$helm" ] || { echo "release.sh: no helm at $helm (hack/build-helm.sh needs Go)" >&2; exit 1; }
  local tmp
  tmp="$(mktemp -d)"
  "$helm" package "$chart_dir" --destination "$tmp" >&2
  local name="bloom-operator-$chart_version.tgz"
  mkdir "$tmp/x"
  tar -xmzf "$tmp/$name" -C "$tmp/x"
  # Chart.yaml first, as helm writes it; then the rest in name order.
  local files=(bloom-operator/Chart.yaml)
  mapfile -t -O 1 files < <(cd "$tmp/x" && find bloom-operator -type f ! -path bloom-operator/Chart.yaml | sort)
  fixed_tgz "$tmp/x" "$out/$name" "${files[@]}"
  rm -rf "$tmp"
}

release_crds() {
  local bundle="$out/bloom-operator-crds-$version.yaml" crd
  {
    echo "# bloom-operator $version: the BloomFilter and BloomStore CRDs (kubectl apply --server-side -f)"
    for crd in crds/*.yml; do
      echo "---"
      cat "$crd"
    done
  } >"$bundle"
}

release_plugin() {
  need operator/target/bloom-operator.jar
  local tmp files=(kubectl-bloom install.sh bloom-operator.jar LICENSE THIRD-PARTY.txt)
  tmp="$(mktemp -d)"
  install -m 0755 deploy/kubectl-plugin/kubectl-bloom deploy/kubectl-plugin/install.sh "$tmp/"
  install -m 0644 operator/target/bloom-operator.jar LICENSE operator/THIRD-PARTY.txt "$tmp/"
  fixed_tgz "$tmp" "$out/kubectl-bloom-$version.tar.gz" "${files[@]}"
  # linux/amd64 also gets a bundle with its own Java runtime (java/: the image's jlink runtime,
  # the same modules, linked against the host's glibc), so users there need no JDK. The image
  # build makes the same runtime; build-java-rootfs.sh does nothing when it is up to date.
  local modules runtime=operator/target/image-rootfs
  modules="$(sed -n 's|.*<image.jdkModules>\(.*\)</image.jdkModules>.*|\1|p' operator/pom.xml)"
  bash hack/build-java-rootfs.sh "$runtime" "$modules" >&2
  cp -a "$runtime/opt/java" "$tmp/java"
  mapfile -t -O ${#files[@]} files < <(cd "$tmp" && find java | sort)
  fixed_tgz "$tmp" "$out/kubectl-bloom-$version-linux-amd64.tar.gz" "${files[@]}"
  rm -rf "$tmp"
  # The krew manifest names the archives where they will be published, and pins their bytes.
  # The template's own header comment is replaced by one for the release.
  local sha sha_linux uri uri_linux
  sha="$(sha256sum "$out/kubectl-bloom-$version.tar.gz" | cut -c1-64)"
  sha_linux="$(sha256sum "$out/kubectl-bloom-$version-linux-amd64.tar.gz" | cut -c1-64)"
  uri="$(printf '%s' "${release_url%/}/kubectl-bloom-$version.tar.gz" | sed 's/[&|\\]/\\&/g')"
  uri_linux="$(printf '%s' "${release_url%/}/kubectl-bloom-$version-linux-amd64.tar.gz" | sed 's/[&|\\]/\\&/g')"
  {
    echo "# krew manifest of kubectl-bloom $version: kubectl krew install --manifest=<this file>"
    sed -e '/^#/d' -e "s|@VERSION@|$version|g" \
      -e "s|@URI_LINUX_AMD64@|$uri_linux|g" -e "s|@SHA256_LINUX_AMD64@|$sha_linux|g" \
      -e "s|@URI@|$uri|g" -e "s|@SHA256@|$sha|g" \
      deploy/kubectl-plugin/krew-manifest.yaml.in
  } >"$out/kubectl-bloom-$version.krew.yaml"
}

release_sbom() {
  need operator/target/bom.json
  cp operator/target/bom.json "$out/bloom-operator-$version.cdx.json"
}

release_maven() {
  local repo="$out/maven/io/bloomoperator" module artifact dir kind
  mkdir -p "$repo/bloom-operator-parent/$version"
  cp pom.xml "$repo/bloom-operator-parent/$version/bloom-operator-parent-$version.pom"
  for module in "${maven_modules[@]}"; do
    artifact="$(sed -n '/<\/parent>/,/<artifactId>/s|^  <artifactId>\(.*\)</artifactId>$|\1|p' "$module/pom.xml")"
    dir="$repo/$artifact/$version"
    mkdir -p "$dir"
    cp "$module/pom.xml" "$dir/$artifact-$version.pom"
    for kind in "" -sources -javadoc; do
      need "$module/target/$artifact-$version$kind.jar"
      cp "$module/target/$artifact-$version$kind.jar" "$dir/"
    done
  done
}

# Never empties a directory this script did not make.
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ] && [ ! -f "$out/.bloom-release" ]; then
  echo "release.sh: $out exists and was not made by release.sh; choose another OUTDIR" >&2
  exit 1
fi

if $build; then
  image_args=()
  want image || image_args=(-DskipImage)
  if $multiarch && want image; then
    image_args=(-Pmultiarch)
  fi
  modules="$(IFS=,; echo "${maven_modules[*]}"),sidecar-lib/lookup-sidecar,operator"
  # -DskipTests: the image is still built (pre-integration-test), the SBOM at package.
  # Not -o: cyclonedx-maven-plugin's goals declare that they need Maven's online mode, and Maven
  # skips them under -o. Once ~/.m2 holds the build's artifacts nothing is downloaded; -nsu keeps
  # Maven from asking remote repositories for newer snapshots.
  # shellcheck disable=SC2086
  mvn -B -q -nsu -pl "$modules" -am -DskipTests "${image_args[@]}" ${RELEASE_MVN_ARGS:-} verify
fi

rm -rf "$out"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
touch "$out/.bloom-release"
for part in image chart crds plugin sbom maven; do
  if want "$part"; then
    "release_$part"
  fi
done
(cd "$out" && find . -type f ! -name SHA256SUMS ! -name .bloom-release | sed 's|^\./||' | sort \
  | xargs -d '\n' sha256sum >SHA256SUMS)
echo "release $version (SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH) in ${out#"$root"/}:"
(cd "$out" && cat SHA256SUMS)
