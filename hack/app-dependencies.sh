#!/usr/bin/env bash
# What an application gets when it depends on a library module of this project: every jar on its
# runtime classpath (the module's own jar included), their count and total size.
#   bash hack/app-dependencies.sh [module]   (default sidecar-lib; or sidecar-lib/spring-boot-starter,
#                                             sidecar-lib/snapshot-format)
# Maven's own resolution of the module's runtime class path (dependency:list), minus its optional
# dependencies and what only they bring (marked "(optional)" in dependency:tree): an application
# does not inherit those. (The tree alone is not enough: it hides artifacts whose nearest path
# runs through a test-scoped dependency, though their scope is compile.)
set -euo pipefail
cd "$(dirname "$0")/.."
MODULE="${1:-sidecar-lib}"
OUT="$PWD/$MODULE/target/app-dependencies"   # kept: the list and tree behind the figures
mkdir -p "$OUT"
# package, not install: the reactor resolves this checkout's modules, ~/.m2 is left alone.
mvn -B -q -pl "$MODULE" -am -DskipTests -DskipKubeBinaries -DskipTestPrereqs \
  -Dmaven.javadoc.skip -Dmaven.source.skip package \
  org.apache.maven.plugins:maven-dependency-plugin:3.8.1:list -DincludeScope=runtime \
  -DoutputAbsoluteArtifactFilename=true -DoutputFile="$OUT/list.txt" -DappendOutput=false >/dev/null
mvn -B -q -pl "$MODULE" org.apache.maven.plugins:maven-dependency-plugin:3.8.1:tree -Dscope=runtime \
  -DoutputFile="$OUT/tree.txt" -DappendOutput=false >/dev/null
# -am writes every module's list to the file in turn; the module's own is the last.
optional=$(sed -n 's/^[|+\\ -]*\([^ :]*:[^ :]*\):.*(optional)$/\1:/p' "$OUT/tree.txt")
# Lines look like "   g:a:jar:v:scope:/path/a-v.jar -- module name"
jars=$(grep ':jar:' "$OUT/list.txt" | grep -v -F -f <(printf '%s\n' "${optional:-NONE}" | sed 's/^/   /') \
  | sed -n 's/^ *[^ ]*:jar:[^/]*:\(\/[^ ]*\.jar\).*$/\1/p' | sort -u)
own="$(ls "$MODULE"/target/*.jar | grep -v -e '-sources' -e '-javadoc' -e '-tests' | head -1)"
jars=$(printf '%s\n%s\n' "$jars" "$own" | grep . | sort -u)
count=$(printf '%s\n' "$jars" | grep -c .)
bytes=$(printf '%s\n' "$jars" | xargs du -bL | awk '{s+=$1} END {print s}')
printf '%s\n' "$jars" | xargs -n1 basename | sort
echo "$MODULE: $count jars, $(awk -v b="$bytes" 'BEGIN {printf "%.1f", b/1048576}') MiB on an application's runtime classpath"
