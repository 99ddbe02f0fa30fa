package io.bloomoperator.source;

import io.bloomoperator.api.SourceSpec;
import io.fabric8.kubernetes.client.KubernetesClient;

/** Turns the resource's source declaration into a {@link KeySource}. */
public final class KeySources {

  private KeySources() {
  }

  /**
   * The source the spec declares. The schema guarantees exactly one kind; a resource that slipped
   * past it (e.g. an older CRD) gets a clear error instead of a guess.
   */
  public static KeySource from(SourceSpec spec, KubernetesClient client, String namespace) {
    if (spec == null) {
      throw new IllegalArgumentException("spec.source is required");
    }
    int kinds = (spec.getInline() != null ? 1 : 0) + (spec.getConfigMap() != null ? 1 : 0)
        + (spec.getSecret() != null ? 1 : 0);
    if (kinds != 1) {
      throw new IllegalArgumentException(
          "exactly one of inline, configMap or secret must be set in spec.source");
    }
    if (spec.getInline() != null) {
      return new InlineSource(spec.getInline());
    }
    if (spec.getConfigMap() != null) {
      return new ConfigMapSource(client, namespace, spec.getConfigMap().getName(),
          spec.getConfigMap().getKey());
    }
    return new SecretSource(client, namespace, spec.getSecret().getName(),
        spec.getSecret().getKey());
  }
}
