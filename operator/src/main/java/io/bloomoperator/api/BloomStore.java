package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Categories;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * An S3-compatible object store that BloomFilters may keep their snapshot chunks in, defined by a
 * cluster administrator (cluster-scoped, like a StorageClass): authors only name it in {@code
 * spec.snapshot.store}, so no author ever supplies an endpoint or credentials.
 */
@Group(BloomFilter.GROUP)
@Version(BloomFilter.VERSION)
@ShortNames("bst")
@Categories(BloomFilter.CATEGORY)
@ValidationRule(value = "has(self.spec)", message = "spec is required")
@AdditionalPrinterColumn(
    name = "Ready",
    type = AdditionalPrinterColumn.Type.STRING,
    jsonPath = ".status.conditions[?(@.type==\"Ready\")].status")
@AdditionalPrinterColumn(
    name = "Bucket",
    type = AdditionalPrinterColumn.Type.STRING,
    jsonPath = ".spec.bucket")
@AdditionalPrinterColumn(
    name = "Age",
    type = AdditionalPrinterColumn.Type.DATE,
    jsonPath = ".metadata.creationTimestamp")
public class BloomStore extends CustomResource<BloomStoreSpec, BloomStoreStatus> {

  /** Overridden only to describe {@code spec} in the CRD. */
  @Override
  @JsonPropertyDescription(
      "Where snapshot chunks go (endpoint, bucket, prefix), with which credentials of the"
          + " operator, and which namespaces' BloomFilters may use this store.")
  public BloomStoreSpec getSpec() {
    return super.getSpec();
  }

  /** Overridden only to describe {@code status} in the CRD. */
  @Override
  @JsonPropertyDescription("Written by the operator: whether the bucket is reachable.")
  public BloomStoreStatus getStatus() {
    return super.getStatus();
  }
}
