#!/usr/bin/env bash
# Joins single-platform OCI image layouts (tarballs as Jib's buildTar writes them) into one
# multi-platform image: an OCI image layout, tarred, whose index.json names an image index that
# lists each image's manifest with the platform its config declares. `crane push` of the unpacked
# layout pushes the index and every image; a runtime pulls the manifest of its own platform.
#
# Why not Jib alone: its buildTar refuses more than one platform ("multi-platform image building
# not supported when building a local tar image"), so operator/pom.xml's multiarch profile builds
# one tarball per platform and this script joins them. No registry is needed: an index is a small
# JSON document naming the manifests' digests, written here byte for byte the same on every run.
#
# Usage: build-image-index.sh OUT.tar LAYOUT.tar...
# Every layout must hold one image, all named the same (org.opencontainers.image.ref.name, which
# OUT names too), each of a platform no other has.
set -euo pipefail

out="${1:?usage: build-image-index.sh OUT.tar LAYOUT.tar...}"
shift
[ $# -gt 0 ] || { echo "build-image-index: no layouts given" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/out/blobs/sha256"

# The first match of "KEY":"VALUE" (or "KEY":NUMBER) in a compact JSON document; Jib writes
# compact JSON and every key read here occurs once where it is read, the first "digest" of a
# manifest being its config's.
field() { grep -o "\"$1\":\(\"[^\"]*\"\|[0-9]*\)" | head -1 | sed 's/^"[^"]*"://; s/"//g'; }
blob() { cat "$1/blobs/sha256/${2#sha256:}"; }

ref="" entries="" platforms=" " n=0
for tarball in "$@"; do
  dir="$work/in$n"
  n=$((n + 1))
  mkdir "$dir"
  tar -xf "$tarball" -C "$dir"
  index="$(cat "$dir/index.json")"
  if [ "$(grep -o '"digest"' <<<"$index" | wc -l)" != 1 ]; then
    echo "build-image-index: $tarball holds more than one manifest" >&2
    exit 1
  fi
  name="$(field org.opencontainers.image.ref.name <<<"$index")"
  if [ -n "$ref" ] && [ "$name" != "$ref" ]; then
    echo "build-image-index: $tarball is $name, the first layout $ref" >&2
    exit 1
  fi
  ref="$name"
  media_type="$(field mediaType <<<"${index#*\"manifests\":}")"
  digest="$(field digest <<<"$index")"
  size="$(field size <<<"$index")"
  config="$(blob "$dir" "$(blob "$dir" "$digest" | field digest)")"
  os="$(field os <<<"$config")"
  arch="$(field architecture <<<"$config")"
  if [ -z "$os" ] || [ -z "$arch" ] || [[ "$platforms" == *" $os/$arch "* ]]; then
    echo "build-image-index: $tarball's platform '$os/$arch' is missing or repeated" >&2
    exit 1
  fi
  platforms="$platforms$os/$arch "
  # Blobs are named by their digest: the platforms' shared layers are one file.
  for b in "$dir"/blobs/sha256/*; do
    [ -e "$work/out/blobs/sha256/${b##*/}" ] || cp "$b" "$work/out/blobs/sha256/"
  done
  entries="$entries${entries:+,}{\"mediaType\":\"$media_type\",\"digest\":\"$digest\",\"size\":$size,\"platform\":{\"architecture\":\"$arch\",\"os\":\"$os\"}}"
done

index_type=application/vnd.oci.image.index.v1+json
printf '%s' "{\"schemaVersion\":2,\"mediaType\":\"$index_type\",\"manifests\":[$entries]}" \
  >"$work/index-blob.json"
index_digest="sha256:$(sha256sum "$work/index-blob.json" | cut -c1-64)"
index_size="$(stat -c %s "$work/index-blob.json")"
mv "$work/index-blob.json" "$work/out/blobs/sha256/${index_digest#sha256:}"
printf '%s' "{\"schemaVersion\":2,\"mediaType\":\"$index_type\",\"manifests\":[{\"mediaType\":\"$index_type\",\"digest\":\"$index_digest\",\"size\":$index_size,\"annotations\":{\"org.opencontainers.image.ref.name\":\"$ref\"}}]}" \
  >"$work/out/index.json"
printf '%s' '{"imageLayoutVersion":"1.0.0"}' >"$work/out/oci-layout"

# Reproducible: entries sorted, fixed times and owners.
mkdir -p "$(dirname "$out")"
(cd "$work/out" && find . -mindepth 1 -printf '%P\n' | LC_ALL=C sort |
  tar --no-recursion --format=ustar --mtime=@1 --owner=0 --group=0 --numeric-owner \
    --mode=u+rw,go-w,a+rX -cf "$work/out.tar" -T -)
mv "$work/out.tar" "$out"
echo "build-image-index: $out: $ref ($platforms), index $index_digest" >&2
