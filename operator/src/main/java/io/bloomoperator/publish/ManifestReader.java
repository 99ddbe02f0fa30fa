package io.bloomoperator.publish;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads one filter's manifest ConfigMap, and only if this BloomFilter controls it: a ConfigMap of
 * that name owned by anyone else is neither adopted nor overwritten.
 */
final class ManifestReader {

  private static final Logger LOG = LoggerFactory.getLogger(ManifestReader.class);

  private final KubernetesClient client;
  private final BloomFilter owner;

  ManifestReader(KubernetesClient client, BloomFilter owner) {
    this.client = client;
    this.owner = owner;
  }

  /**
   * The manifest ConfigMap; a manifest that does not parse is reported and treated as absent, so
   * the next publish replaces it.
   *
   * @return null when there is no manifest ConfigMap
   * @throws PublishException {@link Reasons#NAME_CONFLICT} when the ConfigMap is not controlled by
   *     this BloomFilter
   */
  PublishedSnapshot read() throws PublishException {
    String namespace = owner.getMetadata().getNamespace();
    String name = owner.getMetadata().getName();
    ConfigMap configMap =
        client.configMaps().inNamespace(namespace).withName(SnapshotNames.manifestName(name)).get();
    if (configMap == null) {
      return null;
    }
    if (!controlledByOwner(configMap)) {
      throw PublishFailures.manifestNameTaken(configMap.getMetadata().getName());
    }
    String json = SnapshotConfigMaps.manifestJson(configMap);
    Manifest manifest = null;
    if (json != null) {
      try {
        manifest = Manifest.fromJson(json);
      } catch (SnapshotVerificationException e) {
        LOG.warn(
            "manifest of {}/{} is unreadable and will be replaced: {}",
            namespace,
            name,
            e.getMessage());
      }
    }
    return new PublishedSnapshot(configMap, manifest);
  }

  /** {@link #read()}, or null when it fails. */
  PublishedSnapshot readQuietly() {
    try {
      return read();
    } catch (KubernetesClientException | PublishException e) {
      return null;
    }
  }

  /** Whether the object's controller ownerReference is this BloomFilter (same uid). */
  private boolean controlledByOwner(ConfigMap configMap) {
    List<OwnerReference> references = configMap.getMetadata().getOwnerReferences();
    return references != null
        && references.stream()
            .anyMatch(
                r ->
                    Boolean.TRUE.equals(r.getController())
                        && owner.getMetadata().getUid().equals(r.getUid()));
  }
}
