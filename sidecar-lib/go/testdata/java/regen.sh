#!/bin/sh
# Regenerates ../java-*.tsv* from the Java code of record (sidecar-lib/snapshot-format, built by
# Maven into target/classes, or the classes directory in $BLOOM_JAVA_CLASSES) and Jackson from
# ~/.m2: what the Go tests compare the Go reader with.
set -eu
cd "$(dirname "$0")"
root=$(cd ../../../.. && pwd)
jackson=$HOME/.m2/repository/com/fasterxml/jackson/core
v=$(sed -n 's:.*<jackson.version>\(.*\)</jackson.version>.*:\1:p' "$root/pom.xml")
classes=${BLOOM_JAVA_CLASSES:-$root/sidecar-lib/snapshot-format/target/classes}
cp="$classes:$jackson/jackson-databind/$v/jackson-databind-$v.jar:$jackson/jackson-core/$v/jackson-core-$v.jar:$jackson/jackson-annotations/${v%.*}/jackson-annotations-${v%.*}.jar"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
javac -d "$tmp" -cp "$cp" Names.java Reports.java Times.java Sigs.java Manifests.java
java -cp "$cp:$tmp" Names > ../java-names.tsv
java -cp "$cp:$tmp" Reports > ../java-reports.tsv
java -cp "$cp:$tmp" Times > ../java-created-at.tsv
java -cp "$cp:$tmp" Sigs > ../java-signatures.tsv
(cd "$tmp" && python3 "$OLDPWD/manifests.py" "$root/sidecar-lib/test-vectors" && java -cp "$cp:$tmp" Manifests) | gzip -9n > ../java-manifests.tsv.gz
