#!/usr/bin/env bash
# Regenerates the CRD YAML from the API classes (io.bloomoperator.api) into crds/.
# CrdUpToDateTest fails until the result is committed; the Helm chart's crds/ is a copy
# (HelmChartTest fails when it drifts).
set -euo pipefail
cd "$(dirname "$0")/.."
# process-test-classes: the build puts the printer columns in declared order after test-compile
# (PrinterColumnOrder), so the copies below are what CrdUpToDateTest compares.
mvn -q -B ${MVN_OFFLINE:-} -pl operator -am process-test-classes -DskipTests -DskipTestPrereqs -DskipImage
for crd in bloomfilters bloomstores; do
  cp "operator/target/classes/META-INF/fabric8/$crd.bloomoperator.io-v1.yml" crds/
  cp "crds/$crd.bloomoperator.io-v1.yml" deploy/helm/bloom-operator/crds/
done
echo "crds/*.bloomoperator.io-v1.yml and the Helm chart's copies updated"
