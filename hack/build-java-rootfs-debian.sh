#!/usr/bin/env bash
# Builds the image's Java root filesystem for a given architecture (amd64 or arm64) from Debian
# packages fetched with apt, without installing them and without a container engine: the
# multi-architecture image's runtime layers (docs/image.md, "Platforms"). Same layout as
# hack/build-java-rootfs.sh, which copies the build machine's installed JDK and libraries instead:
#
#   /opt/java/                 a jlink runtime of the given JDK modules, linked from the target
#                              architecture's jmods (openjdk-17-jdk-headless:ARCH)
#   INTERPRETER, /lib/TRIPLET/*.so*
#                              the C libraries those ELF files need (DT_NEEDED, followed through the
#                              copied libraries; ldd cannot read a foreign ELF), from libc6, zlib1g,
#                              libgcc-s1 and libstdc++6 of ARCH; the program interpreter at the path
#                              bin/java names (arm64: /lib/ld-linux-aarch64.so.1)
#   /usr/share/doc/<package>/copyright   their licences; /usr/share/doc/java-rootfs/packages.txt
#                              lists package=version of everything used, and the JDK's release
#   /etc/passwd, /etc/group, /tmp        as in hack/build-java-rootfs.sh
#
# Why another architecture's runtime can be made here: jlink links any platform's jmods, but only
# with a jlink of the same JDK build (JDK 17 checks the feature release only; later JDKs refuse any
# other build, and the generated module graph assumes it). The Debian archive keeps only the newest
# update of a package, which is often not the one installed here, so this script takes jlink from
# the amd64 packages of the same version as the target's jmods (fetched and unpacked too, run from
# the cache), for every ARCH, amd64 included: every platform of the image gets the same JDK update.
#
# Usage: build-java-rootfs-debian.sh ARCH OUT_DIR MODULES   (MODULES: comma-separated)
# Packages come from the apt sources configured on this machine (/etc/apt), with indexes and
# downloads in a cache of their own (BLOOM_CACHE_DIR, default ~/.cache/bloom-operator, under
# debian-packages/): dpkg is never told of a foreign architecture and nothing is installed. The
# candidate versions are looked up on every run (`apt-get update`, a few seconds; when it cannot
# reach the archive the cached indexes are used, with a warning); when OUT_DIR records the same
# versions, modules and script it does nothing. Needs a Debian 12 (or derived) amd64 machine with
# dpkg-deb, apt-get and readelf (binutils).
set -euo pipefail

ARCH="${1:?usage: build-java-rootfs-debian.sh ARCH OUT_DIR MODULES}"
OUT="${2:?usage: build-java-rootfs-debian.sh ARCH OUT_DIR MODULES}"
MODULES="${3:?usage: build-java-rootfs-debian.sh ARCH OUT_DIR MODULES}"

JDK=openjdk-17
# The libraries the runtime's ELF files need: glibc (with the program interpreter), zlib (the JDK
# uses the system's), libstdc++ and libgcc_s (libjvm.so is C++). A NEEDED library none of them
# holds stops the build, naming it.
LIB_PACKAGES=(libc6 zlib1g libgcc-s1 libstdc++6)

case "$ARCH" in
  amd64) TRIPLET=x86_64-linux-gnu INTERP=/lib64/ld-linux-x86-64.so.2 MACHINE="X86-64" ;;
  arm64) TRIPLET=aarch64-linux-gnu INTERP=/lib/ld-linux-aarch64.so.1 MACHINE="AArch64" ;;
  *)
    echo "java-rootfs-debian: ARCH must be amd64 or arm64, not $ARCH" >&2
    exit 2
    ;;
esac
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ] || ! command -v apt-get >/dev/null ||
  ! command -v dpkg-deb >/dev/null || ! command -v readelf >/dev/null; then
  echo "java-rootfs-debian: needs linux-amd64 with apt-get, dpkg-deb and readelf (binutils);" \
    "this is $(uname -s)-$(uname -m)" >&2
  exit 1
fi

CACHE="${BLOOM_CACHE_DIR:-$HOME/.cache/bloom-operator}/debian-packages"
mkdir -p "$CACHE/apt/lists/partial" "$CACHE/apt/archives/partial" "$CACHE/debs" "$CACHE/unpacked"
touch "$CACHE/apt/status"
# apt as configured here (sources, proxies, keys), but with both architectures and an empty dpkg
# status in the cache: the machine's own apt and dpkg state is neither read nor written.
APT=(-q -o APT::Architecture=amd64 -o APT::Architectures::=amd64 -o APT::Architectures::=arm64
  -o "Dir::State=$CACHE/apt" -o "Dir::State::Lists=$CACHE/apt/lists"
  -o "Dir::State::status=$CACHE/apt/status" -o "Dir::Cache=$CACHE/apt"
  -o APT::Sandbox::User=root)

if ! apt-get "${APT[@]}" update >"$CACHE/apt/update.log" 2>&1; then
  if ! compgen -G "$CACHE/apt/lists/*Packages*" >/dev/null; then
    echo "java-rootfs-debian: apt-get update failed and no indexes are cached:" >&2
    cat "$CACHE/apt/update.log" >&2
    exit 1
  fi
  echo "java-rootfs-debian: WARNING: apt-get update failed; using the cached indexes" >&2
fi

candidate() { # PACKAGE:ARCH -> the version apt-get download would fetch
  apt-cache "${APT[@]}" policy "$1" | sed -n 's/^  Candidate: //p'
}
jdk_version="$(candidate "$JDK-jdk-headless:$ARCH")"
jlink_version="$(candidate "$JDK-jdk-headless:amd64")"
if [ -z "$jdk_version" ] || [ "$jdk_version" = "(none)" ]; then
  echo "java-rootfs-debian: the apt sources here have no $JDK-jdk-headless:$ARCH" >&2
  exit 1
fi
if [ "$jdk_version" != "$jlink_version" ]; then
  echo "java-rootfs-debian: $JDK-jdk-headless is $jdk_version for $ARCH but $jlink_version for" \
    "amd64; jlink needs its own build's jmods (wait for the archive to publish both)" >&2
  exit 1
fi
versions="$JDK-jdk-headless=$jdk_version"
for pkg in "${LIB_PACKAGES[@]}"; do
  versions="$versions $pkg=$(candidate "$pkg:$ARCH")"
done

WANT="$ARCH; $versions; modules $MODULES; script $(sha256sum "$0" | cut -c1-16)"
STAMP="$OUT/../$(basename "$OUT").built-from"
if [ -d "$OUT" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
  echo "java-rootfs-debian: $OUT is up to date ($WANT)" >&2
  exit 0
fi
echo "java-rootfs-debian: building $OUT ($WANT)" >&2

# Downloads PACKAGE:ARCH at VERSION (once) and unpacks it (once) into a directory of its own;
# prints that directory. Absolute symbolic links (the JDK's conf/ points into /etc/java-17-openjdk)
# are made to point inside the unpacked tree, so nothing of this machine's own JDK is read.
unpacked() {
  local spec="$1" version="$2" name="${1%%:*}" arch="${1##*:}"
  local dir="$CACHE/unpacked/${name}_${version//:/%3a}_$arch"
  if [ ! -f "$dir/.complete" ]; then
    # apt names the file PACKAGE_VERSION_ARCH.deb, an epoch's colon written %3a.
    local deb="$CACHE/debs/${name}_${version//:/%3a}_$arch.deb"
    if [ ! -f "$deb" ]; then
      (cd "$CACHE/debs" && apt-get "${APT[@]}" download "$spec=$version" >&2)
    fi
    rm -rf "$dir" && mkdir -p "$dir"
    dpkg-deb -x "$deb" "$dir"
    find "$dir" -type l -lname '/*' -print0 | while IFS= read -r -d '' link; do
      ln -sfn "$dir$(readlink "$link")" "$link"
    done
    touch "$dir/.complete"
  fi
  echo "$dir"
}

# The amd64 JDK of the same version, for its jlink: bin/ and jmods/ are in -jdk-headless, the
# JVM it runs on (lib/, conf/) in -jre-headless. Both unpacked into one tree.
jlink_home="$CACHE/unpacked/jlink_${jdk_version//:/%3a}_amd64"
if [ ! -f "$jlink_home/.complete" ]; then
  rm -rf "$jlink_home" && mkdir -p "$jlink_home"
  for part in jre-headless jdk-headless; do
    cp -a "$(unpacked "$JDK-$part:amd64" "$jdk_version")/." "$jlink_home/"
  done
  # The copied trees' absolute links still point into the per-package directories: re-point.
  find "$jlink_home" -type l -lname "$CACHE/unpacked/*" -print0 | while IFS= read -r -d '' link; do
    target="$(readlink "$link")"
    ln -sfn "$jlink_home/${target#"$CACHE"/unpacked/*/}" "$link"
  done
  touch "$jlink_home/.complete"
fi
java_home_amd64="$jlink_home/usr/lib/jvm/java-17-openjdk-amd64"
jmods="$(unpacked "$JDK-jdk-headless:$ARCH" "$jdk_version")/usr/lib/jvm/java-17-openjdk-$ARCH/jmods"
release="$(sed -n 's/^JAVA_RUNTIME_VERSION="\(.*\)"/\1/p' "$java_home_amd64/release")"

rm -rf "$OUT" "$STAMP"
mkdir -p "$OUT"
# As in hack/build-java-rootfs.sh: no --compress (the layer is gzipped), no CDS archive (jlink
# cannot run the target's JVM to make one, and without it the output is reproducible). Not
# --strip-debug: on Linux it also runs this machine's objcopy over the native libraries, which
# cannot read another architecture's ELF; Debian ships them without debug sections anyway (in
# its -dbgsym packages), so stripping the class files' debug attributes is all it would do.
"$java_home_amd64/bin/jlink" --module-path "$jmods" --add-modules "$MODULES" \
  --strip-java-debug-attributes --no-header-files --no-man-pages \
  --output "$OUT/opt/java"

elf_machine() { # FILE -> readelf's Machine line, or nothing when FILE is not ELF
  { LC_ALL=C readelf -h "$1" 2>/dev/null || true; } | sed -n 's/^ *Machine: *//p'
}
declare -A lib_dirs=() used=()
for pkg in "${LIB_PACKAGES[@]}"; do
  lib_dirs["$pkg"]="$(unpacked "$pkg:$ARCH" "$(candidate "$pkg:$ARCH")")"
done

# Every ELF file of the runtime, then every library copied for it: their NEEDED sonames that the
# runtime does not hold itself (its RPATH $ORIGIN and lib/server) are copied from the packages
# into /lib/TRIPLET, which glibc's loader searches without an ld.so.cache.
mkdir -p "$OUT/lib/$TRIPLET"
queue=()
while IFS= read -r -d '' f; do
  machine="$(elf_machine "$f")"
  [ -n "$machine" ] || continue
  if [[ "$machine" != *"$MACHINE"* ]]; then
    echo "java-rootfs-debian: $f is $machine, not $MACHINE" >&2
    exit 1
  fi
  queue+=("$f")
done < <(find "$OUT/opt/java" -type f -print0 | sort -z)
declare -A seen=()
while [ "${#queue[@]}" -gt 0 ]; do
  f="${queue[0]}"
  queue=("${queue[@]:1}")
  for soname in $(LC_ALL=C readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    [ -z "${seen[$soname]:-}" ] || continue
    seen["$soname"]=1
    # The runtime's own, or the interpreter (libc.so.6 names it; the loader is itself).
    if [ -n "$(find "$OUT/opt/java/lib" -name "$soname" -print -quit)" ] ||
      [ "$soname" = "$(basename "$INTERP")" ]; then
      continue
    fi
    found=""
    for pkg in "${LIB_PACKAGES[@]}"; do
      for d in "${lib_dirs[$pkg]}/lib/$TRIPLET" "${lib_dirs[$pkg]}/usr/lib/$TRIPLET"; do
        if [ -e "$d/$soname" ]; then
          found="$d/$soname"
          used["$pkg"]=1
          break 2
        fi
      done
    done
    if [ -z "$found" ]; then
      echo "java-rootfs-debian: $soname (needed by ${f#"$OUT"}) is in none of" \
        "${LIB_PACKAGES[*]} ($ARCH); add its package to LIB_PACKAGES" >&2
      exit 1
    fi
    cp -L "$found" "$OUT/lib/$TRIPLET/$soname"
    queue+=("$OUT/lib/$TRIPLET/$soname")
  done
done

# The program interpreter, at the absolute path the kernel reads from bin/java.
interp="$(LC_ALL=C readelf -l "$OUT/opt/java/bin/java" | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')"
if [ "$interp" != "$INTERP" ]; then
  echo "java-rootfs-debian: bin/java asks for the interpreter '$interp', expected $INTERP" >&2
  exit 1
fi
mkdir -p "$OUT$(dirname "$INTERP")"
cp -L "${lib_dirs[libc6]}$INTERP" "$OUT$INTERP"
used[libc6]=1
for f in "$OUT/lib/$TRIPLET"/* "$OUT$INTERP"; do
  if [[ "$(elf_machine "$f")" != *"$MACHINE"* ]]; then
    echo "java-rootfs-debian: $f is not $MACHINE" >&2
    exit 1
  fi
done

# Licences of what was copied, and what it was copied from. libstdc++6 and libgcc-s1 keep theirs
# in gcc-12-base's directory (their doc directory is a link to it): follow it.
mkdir -p "$OUT/usr/share/doc/java-rootfs"
packages_txt="$OUT/usr/share/doc/java-rootfs/packages.txt"
for pkg in $(printf '%s\n' "${!used[@]}" | sort); do
  doc="${lib_dirs[$pkg]}/usr/share/doc/$pkg"
  if [ -L "$doc" ]; then
    owner="$(basename "$(readlink "$doc")")"
    doc="$(unpacked "$owner:$ARCH" "$(candidate "$owner:$ARCH")")/usr/share/doc/$owner"
  fi
  mkdir -p "$OUT/usr/share/doc/$pkg"
  cp "$doc/copyright" "$OUT/usr/share/doc/$pkg/copyright"
  echo "$pkg=$(candidate "$pkg:$ARCH")" >>"$packages_txt"
done
echo "$JDK-jdk-headless=$jdk_version" >>"$packages_txt"
echo "jdk=$release" >>"$packages_txt"

mkdir -p "$OUT/etc" "$OUT/tmp"
printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' \
  'nonroot:x:65532:65532:nonroot:/tmp:/sbin/nologin' >"$OUT/etc/passwd"
printf '%s\n' 'root:x:0:' 'nonroot:x:65532:' >"$OUT/etc/group"

echo "$WANT" >"$STAMP"
echo "java-rootfs-debian: done, $ARCH, $(du -sh "$OUT" | cut -f1)" >&2
