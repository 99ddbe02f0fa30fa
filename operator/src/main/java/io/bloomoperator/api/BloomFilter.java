package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Categories;
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
@Categories(BloomFilter.CATEGORY)
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
// Where the chunks live: a BloomStore's name, empty for ConfigMaps.
@AdditionalPrinterColumn(
    name = "Store",
    type = AdditionalPrinterColumn.Type.STRING,
    jsonPath = ".spec.snapshot.store")
@AdditionalPrinterColumn(
    name = "Serving",
    type = AdditionalPrinterColumn.Type.STRING,
    jsonPath = ".status.readers.serving")
@AdditionalPrinterColumn(
    name = "Deltas",
    type = AdditionalPrinterColumn.Type.INTEGER,
    jsonPath = ".status.deltas",
    priority = 1)
// priority 1: shown by `kubectl get bf -o wide` only: why it is (not) Ready, what it is doing,
// how it is refreshed and when it was last built. Columns appear in the order declared here, Age
// last as in kubectl's own tables (the build restores this order: PrinterColumnOrder).
@AdditionalPrinterColumn(
    name = "Reason",
    type = AdditionalPrinterColumn.Type.STRING,
    jsonPath = ".status.conditions[?(@.type==\"Ready\")].reason",
    priority = 1)
@AdditionalPrinterColumn(
    name = "Phase",
    type = AdditionalPrinterColumn.Type.STRING,
    jsonPath = ".status.phase",
    priority = 1)
@AdditionalPrinterColumn(
    name = "Refresh",
    type = AdditionalPrinterColumn.Type.STRING,
    jsonPath = ".spec.refreshInterval",
    priority = 1)
@AdditionalPrinterColumn(
    name = "Last Build",
    type = AdditionalPrinterColumn.Type.DATE,
    jsonPath = ".status.lastBuildTime",
    priority = 1)
@AdditionalPrinterColumn(
    name = "Age",
    type = AdditionalPrinterColumn.Type.DATE,
    jsonPath = ".metadata.creationTimestamp")
public class BloomFilter extends CustomResource<BloomFilterSpec, BloomFilterStatus>
    implements Namespaced {

  public static final String GROUP = "bloomoperator.io";
  public static final String VERSION = "v1alpha1";

  /** The category both kinds belong to: {@code kubectl get bloom} lists filters and stores. */
  public static final String CATEGORY = "bloom";

  /** Overridden only to describe {@code spec} in the CRD, so {@code kubectl explain} shows it. */
  @Override
  @JsonPropertyDescription(
      "The desired filter: where its keys come from (source), how accurate it must be"
          + " (falsePositiveRate, expectedInsertions, keyType) and how it is kept current"
          + " (refreshInterval, snapshot). The operator builds it, publishes it as ConfigMaps named"
          + " <name>-bloom*, and reports progress in status.")
  public BloomFilterSpec getSpec() {
    return super.getSpec();
  }

  /** Overridden only to describe {@code status} in the CRD. */
  @Override
  @JsonPropertyDescription(
      "Written by the operator: the Ready condition and its reason, the published version and"
          + " its size, and the last build's counts.")
  public BloomFilterStatus getStatus() {
    return super.getStatus();
  }

  // No initStatus(): a resource the operator has not seen yet has no status, and the status
  // patch must add /status as a whole rather than fields below a /status that does not exist.
}
