package io.bloomoperator.publish;

import io.bloomoperator.api.BloomFilter;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import java.util.List;
import java.util.Optional;

/**
 * The BloomFilter an object's controller ownerReference names. Labels say nothing about who wrote
 * an object (anyone who may create a ConfigMap may set any label); the controller reference is what
 * the operator itself sets, and a UID cannot be reused by another filter.
 */
public final class ControllingFilter {

  private static final String API_VERSION = BloomFilter.GROUP + "/" + BloomFilter.VERSION;
  private static final String KIND = "BloomFilter";

  private ControllingFilter() {}

  /** The controller reference of {@code object} if it names a BloomFilter. */
  public static Optional<OwnerReference> of(HasMetadata object) {
    List<OwnerReference> references = object.getMetadata().getOwnerReferences();
    if (references == null) {
      return Optional.empty();
    }
    return references.stream()
        .filter(r -> Boolean.TRUE.equals(r.getController()))
        .filter(r -> KIND.equals(r.getKind()) && API_VERSION.equals(r.getApiVersion()))
        .filter(r -> r.getName() != null && r.getUid() != null)
        .findFirst();
  }

  /** Whether {@code object} is controlled by the BloomFilter with this UID. */
  public static boolean is(HasMetadata object, String filterUid) {
    return filterUid != null && of(object).map(r -> filterUid.equals(r.getUid())).orElse(false);
  }
}
