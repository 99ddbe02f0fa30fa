package io.bloomoperator.publish;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.HashMap;
import java.util.Map;

/**
 * The one way the operator writes a manifest ConfigMap: created when it carries no resourceVersion,
 * else updated with that resourceVersion as the precondition, so a concurrent writer makes the
 * write fail with 409 instead of silently replacing a manifest not seen.
 */
@FunctionalInterface
public interface ManifestWriter {

  /**
   * Which operator replica wrote a manifest or chunk ConfigMap (its leader-election identity).
   * Informational, for audits and the fault suite's write history: readers never trust it, anyone
   * who can write ConfigMaps can set it.
   */
  String ANNOTATION_PUBLISHED_BY = "bloomoperator.io/published-by";

  /** Kubernetes' limit for a name-like value; an identity is a pod name. */
  int MAX_PUBLISHER_LENGTH = 253;

  /**
   * Writes {@code desired} and returns the object as the API server answered.
   *
   * @throws io.fabric8.kubernetes.client.KubernetesClientException as the API server refused
   */
  ConfigMap write(ConfigMap desired);

  /** Writes through {@code client}. */
  static ManifestWriter of(KubernetesClient client) {
    return desired -> {
      var resource =
          client.configMaps().inNamespace(desired.getMetadata().getNamespace()).resource(desired);
      return desired.getMetadata().getResourceVersion() == null
          ? resource.create()
          : resource.update();
    };
  }

  /**
   * This writer, asking {@code fence} right before every write (a replica that lost the leader
   * Lease while frozen must not touch what the new leader publishes) and stamping {@value
   * #ANNOTATION_PUBLISHED_BY} with {@code publisher} (null: no stamp).
   */
  default ManifestWriter fencedAs(String publisher, WriteFence fence) {
    String stamp = boundedPublisher(publisher);
    return desired -> {
      fence.check();
      if (stamp != null) {
        Map<String, String> annotations =
            desired.getMetadata().getAnnotations() == null
                ? new HashMap<>()
                : new HashMap<>(desired.getMetadata().getAnnotations());
        annotations.put(ANNOTATION_PUBLISHED_BY, stamp);
        desired.getMetadata().setAnnotations(annotations);
      }
      return write(desired);
    };
  }

  /** {@code publisher} cut to a length any annotation value accepts; null or blank: null. */
  static String boundedPublisher(String publisher) {
    if (publisher == null || publisher.isBlank()) {
      return null;
    }
    return publisher.length() <= MAX_PUBLISHER_LENGTH
        ? publisher
        : publisher.substring(0, MAX_PUBLISHER_LENGTH);
  }
}
