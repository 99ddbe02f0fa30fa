#!/usr/bin/env bash
# What an application gets when it depends on a library module of this project: every jar on its
# runtime classpath (the module's own jar included), their count and total size.
#   bash hack/app-dependencies.sh [module]   (default sidecar-lib; or sidecar-lib/spring-boot-starter,
#                                             sidecar-lib/snapshot-format)
# Maven's own resolution (dependency:tree, runtime scope), minus the module's optional dependencies
# and what only they bring: an application does not inherit those.
set -euo pipefail
cd "$(dirname "$0")/.."
MODULE="${1:-sidecar-lib}"
TREE="$PWD/$MODULE/target/app-dependencies-tree.txt"   # kept: the tree behind the figures
mkdir -p "$(dirname "$TREE")"
# package, not install: the reactor resolves this checkout's modules, ~/.m2 is left alone.
mvn -B -q -pl "$MODULE" -am -DskipTests -DskipKubeBinaries -DskipTestPrereqs \
  -Dmaven.javadoc.skip -Dmaven.source.skip package \
  org.apache.maven.plugins:maven-dependency-plugin:3.8.1:tree -Dscope=runtime \
  -DoutputFile="$TREE" -DappendOutput=false >/dev/null
# -am writes every module's tree to the file in turn; the module's own is the last.
REPO="${M2_REPO:-$HOME/.m2/repository}"
jars=$(awk '
  NR == 1 { next }                                   # the module itself
  {
    match($0, /[A-Za-z0-9]/); depth = (RSTART - 1) / 3
    if (skip && depth > skip) next
    skip = 0
    if ($0 ~ /\(optional\)/) { skip = depth; next }   # not inherited by applications
    split(substr($0, RSTART), word, " "); n = split(word[1], c, ":")
    # group:artifact:type[:classifier]:version:scope
    print c[1], c[2], c[n - 1], (n == 6 ? "-" c[4] : "")
  }' "$TREE" | while read -r g a v classifier; do
    if [ "$g" = io.bloomoperator ]; then
      ls ./*/target/"$a-$v.jar" ./*/*/target/"$a-$v.jar" 2>/dev/null | head -1
    else
      echo "$REPO/${g//.//}/$a/$v/$a-$v${classifier:-}.jar"
    fi
  done)
own="$(ls "$MODULE"/target/*.jar | grep -v -e '-sources' -e '-javadoc' -e '-tests' | head -1)"
jars=$(printf '%s\n%s\n' "$jars" "$own" | grep . | sort -u)
count=$(printf '%s\n' "$jars" | grep -c .)
bytes=$(printf '%s\n' "$jars" | xargs du -bL | awk '{s+=$1} END {print s}')
printf '%s\n' "$jars" | xargs -n1 basename | sort
echo "$MODULE: $count jars, $(awk -v b="$bytes" 'BEGIN {printf "%.1f", b/1048576}') MiB on an application's runtime classpath"
