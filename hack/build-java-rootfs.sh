#!/usr/bin/env bash
# Builds the root filesystem a Java application needs in an image FROM scratch, without a
# container engine or a base-image download (operator/pom.xml's Jib build adds it as a layer
# under the application's own layers; any later Java image can use it the same way):
#
#   /opt/java/                 a jlink runtime of the given JDK modules (its own lib/security/cacerts:
#                              the JDK's CA roots, so TLS to public hosts works without a distro)
#   /lib64/ld-linux-x86-64.so.2, /lib/x86_64-linux-gnu/*.so*
#                              the C libraries that runtime's ELF files load (glibc, libstdc++,
#                              libgcc, zlib: a jlink runtime is not static), copied from the
#                              Debian packages installed here, found with ldd
#   /usr/share/doc/<package>/copyright   their licences; /usr/share/doc/java-rootfs/packages.txt
#                              lists package=version of everything copied
#   /etc/passwd, /etc/group    root and nonroot (65532): user.name and user.home resolve
#   /tmp                       (mode 1777 is set by the image build; the Deployment mounts an emptyDir)
#
# Usage: build-java-rootfs.sh OUT_DIR MODULES       (MODULES: comma-separated, e.g. java.base,java.sql)
# Idempotent: when OUT_DIR records the same JDK, modules and script it does nothing (about 10 s
# otherwise). The output has the same bytes on every run on the same machine (jlink without
# --generate-cds-archive is reproducible; the libraries are copied as installed).
# Environment:
#   JAVA_HOME   the JDK whose jmods are linked (default: the one `jlink` on PATH belongs to)
set -euo pipefail

OUT="${1:?usage: build-java-rootfs.sh OUT_DIR MODULES}"
MODULES="${2:?usage: build-java-rootfs.sh OUT_DIR MODULES}"

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ] || ! command -v dpkg-query >/dev/null; then
  echo "java-rootfs: needs linux-amd64 with Debian packages (dpkg); this is $(uname -s)-$(uname -m)" >&2
  exit 1
fi
if [ -z "${JAVA_HOME:-}" ]; then
  JAVA_HOME="$(dirname "$(dirname "$(readlink -f "$(command -v jlink)")")")"
fi
if [ ! -d "$JAVA_HOME/jmods" ]; then
  echo "java-rootfs: $JAVA_HOME has no jmods/ (Debian 12: apt-get install openjdk-17-jdk-headless)" >&2
  exit 1
fi

release="$(sed -n 's/^JAVA_RUNTIME_VERSION="\(.*\)"/\1/p' "$JAVA_HOME/release")"
WANT="jdk $release; modules $MODULES; script $(sha256sum "$0" | cut -c1-16)"
STAMP="$OUT/../$(basename "$OUT").built-from"
if [ -d "$OUT" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
  echo "java-rootfs: $OUT is up to date ($WANT)" >&2
  exit 0
fi

echo "java-rootfs: building $OUT ($WANT)" >&2
rm -rf "$OUT" "$STAMP"
mkdir -p "$OUT"
# No --compress: the image layer is gzipped anyway, and an uncompressed lib/modules starts faster.
jlink --module-path "$JAVA_HOME/jmods" --add-modules "$MODULES" \
  --strip-debug --no-header-files --no-man-pages \
  --output "$OUT/opt/java"

# Every shared library the runtime's ELF files need and that the runtime does not hold itself.
# Copied (not linked) under the soname the loader asks for, in the directories glibc searches
# without an ld.so.cache; the program interpreter at the absolute path bin/java names.
mkdir -p "$OUT/lib/x86_64-linux-gnu" "$OUT/lib64"
declare -A packages=()
while IFS= read -r lib; do
  case "$lib" in
    "$OUT"/*) continue ;;
  esac
  name="$(basename "$lib")"
  if [[ "$name" == ld-linux-x86-64.so.2 ]]; then
    dest="$OUT/lib64/$name"
  else
    dest="$OUT/lib/x86_64-linux-gnu/$name"
  fi
  cp "$(readlink -f "$lib")" "$dest"
  pkg="$(dpkg-query -S "$lib" 2>/dev/null | head -1 | cut -d: -f1)" ||
    pkg="$(dpkg-query -S "$(readlink -f "$lib")" | head -1 | cut -d: -f1)"
  packages["$pkg"]=1
done < <(find "$OUT/opt/java" -type f \( -name '*.so' -o -perm -u+x \) -print0 |
  xargs -0 ldd 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p' |
  sort -u)
if [ ! -f "$OUT/lib64/ld-linux-x86-64.so.2" ] || [ ! -f "$OUT/lib/x86_64-linux-gnu/libc.so.6" ]; then
  echo "java-rootfs: ldd found no C library for $OUT/opt/java/bin/java" >&2
  exit 1
fi

# Licences of what was copied, and what it was copied from.
mkdir -p "$OUT/usr/share/doc/java-rootfs"
for pkg in $(printf '%s\n' "${!packages[@]}" | sort); do
  base="${pkg%%:*}"
  mkdir -p "$OUT/usr/share/doc/$base"
  cp "/usr/share/doc/$base/copyright" "$OUT/usr/share/doc/$base/copyright"
  dpkg-query -W -f '${Package}=${Version}\n' "$pkg" >> "$OUT/usr/share/doc/java-rootfs/packages.txt"
done
echo "jdk=$release" >> "$OUT/usr/share/doc/java-rootfs/packages.txt"

mkdir -p "$OUT/etc" "$OUT/tmp"
printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' \
  'nonroot:x:65532:65532:nonroot:/tmp:/sbin/nologin' > "$OUT/etc/passwd"
printf '%s\n' 'root:x:0:' 'nonroot:x:65532:' > "$OUT/etc/group"

echo "$WANT" > "$STAMP"
echo "java-rootfs: done, $(du -sh "$OUT" | cut -f1)" >&2
