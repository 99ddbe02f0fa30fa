package io.bloomoperator.api;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * A Bloom filter declared as a Kubernetes resource: where its keys come from and how accurate it
 * must be. The operator builds it and publishes it as a chunked ConfigMap snapshot.
 */
@Group(BloomFilter.GROUP)
@Version(BloomFilter.VERSION)
@ShortNames("bf")
@ValidationRule(value = "has(self.spec)", message = "spec is required")
@AdditionalPrinterColumn(
    name = "Ready",
    type = AdditionalPrinterColumn.Type.STRING,
    jsonPath = ".status.conditions[?(@.type==\"Ready\")].status")
@AdditionalPrinterColumn(
    name = "Version",
    type = AdditionalPrinterColumn.Type.INTEGER,
    jsonPath = ".status.version")
@AdditionalPrinterColumn(
    name = "Keys",
    type = AdditionalPrinterColumn.Type.INTEGER,
    jsonPath = ".status.keys")
@AdditionalPrinterColumn(
    name = "FPP",
    type = AdditionalPrinterColumn.Type.NUMBER,
    jsonPath = ".status.expectedFpp")
@AdditionalPrinterColumn(
    name = "Size",
    type = AdditionalPrinterColumn.Type.STRING,
    jsonPath = ".status.size")
@AdditionalPrinterColumn(
    name = "Deltas",
    type = AdditionalPrinterColumn.Type.INTEGER,
    jsonPath = ".status.deltas",
    priority = 1)
@AdditionalPrinterColumn(
    name = "Age",
    type = AdditionalPrinterColumn.Type.DATE,
    jsonPath = ".metadata.creationTimestamp")
public class BloomFilter extends CustomResource<BloomFilterSpec, BloomFilterStatus>
    implements Namespaced {

  public static final String GROUP = "bloomoperator.io";
  public static final String VERSION = "v1alpha1";

  // No initStatus(): a resource the operator has not seen yet has no status, and the status
  // patch must add /status as a whole rather than fields below a /status that does not exist.
}
