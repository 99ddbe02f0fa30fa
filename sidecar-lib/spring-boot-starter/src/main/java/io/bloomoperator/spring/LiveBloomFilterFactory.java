package io.bloomoperator.spring;

import io.bloomoperator.snapshot.Ed25519Keys;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.bloomoperator.watch.ObjectStore;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.PublicKey;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.io.Resource;

/**
 * Starts the {@link LiveBloomFilter} of one {@code bloom.filters.<bean>} entry (already checked by
 * {@link BloomFilterPropertiesValidator}). Uses the application's {@link KubernetesClient} bean if
 * there is exactly one; otherwise builds a client of its own on first use (configured as fabric8
 * does by default: in a pod, its service account) and closes it when the context closes, after the
 * filters, which depend on this bean.
 */
public class LiveBloomFilterFactory implements DisposableBean {

  /** Trusted key files hold one PEM public key: a few hundred bytes. More is not a key. */
  static final int MAX_KEY_BYTES = 16 * 1024;

  private final ObjectProvider<KubernetesClient> applicationClient;
  private final Supplier<Map<String, ObjectStore>> objectStores;
  private KubernetesClient ownClient; // guarded by this

  /**
   * A factory whose filters read ConfigMaps only.
   *
   * @param applicationClient the application's client, used if there is exactly one
   */
  public LiveBloomFilterFactory(ObjectProvider<KubernetesClient> applicationClient) {
    this(applicationClient, Map::of);
  }

  /**
   * @param applicationClient the application's client, used if there is exactly one
   * @param objectStores the application's {@link ObjectStore} beans by bean name: every filter
   *     reads manifests naming a store of that name from it (name the bean as the operator names
   *     the store, e.g. {@code @Bean("primary")})
   */
  public LiveBloomFilterFactory(
      ObjectProvider<KubernetesClient> applicationClient,
      Supplier<Map<String, ObjectStore>> objectStores) {
    this.applicationClient = applicationClient;
    this.objectStores = objectStores;
  }

  /**
   * Starts following the filter {@code bean} configures; returns without waiting for it. With
   * {@code fixed-keys}, returns a fixed in-memory filter instead and touches no Kubernetes client.
   */
  public LiveBloomFilter<?> create(String bean, BloomFilterProperties properties) {
    if (properties.getFixedKeys() != null) {
      return fixed(properties);
    }
    KubernetesClient client = client();
    String namespace = properties.getNamespace();
    if (namespace == null) {
      namespace = client.getNamespace();
      if (namespace == null || namespace.isBlank()) {
        throw new IllegalStateException(
            BloomFilterPropertiesValidator.prefix(bean)
                + "namespace is not set and the Kubernetes client has no namespace (not in a pod,"
                + " none in the kubeconfig context): set it");
      }
      BloomFilterPropertiesValidator.checkNamespace(bean, namespace);
    }
    BloomFilterWatcher.Builder<?> builder =
        BloomFilterWatcher.builder(
                client, namespace, properties.getName(), LiveKeyType.of(properties.getKeyType()))
            .beforeFirstSnapshot(properties.getFailMode());
    if (properties.getLocalCacheDir() != null) {
      builder.localSnapshotDirectory(properties.getLocalCacheDir());
    }
    builder.memoryMapped(properties.isMemoryMapped());
    for (Resource key : properties.getTrustedKeys()) {
      builder.trustedKey(readKey(bean, key));
    }
    if (properties.getMaxSnapshotBytes() != null) {
      builder.maxSnapshotBytes(properties.getMaxSnapshotBytes().toBytes());
    }
    if (properties.getMaxChunks() != null) {
      builder.maxChunks(properties.getMaxChunks());
    }
    if (properties.getResync() != null) {
      builder.resync(properties.getResync());
    }
    if (properties.getInPlaceCheckInterval() != null) {
      builder.inPlaceDeltas(properties.getInPlaceCheckInterval());
    }
    objectStores
        .get()
        .forEach(
            (name, store) -> {
              try {
                builder.objectStore(name, store);
              } catch (IllegalArgumentException e) {
                throw new IllegalStateException(
                    "ObjectStore bean '"
                        + name
                        + "': its name is the store name manifests carry: "
                        + e.getMessage(),
                    e);
              }
            });
    if (properties.getLocalAddsMaxEntries() != null || properties.getLocalAddsTtl() != null) {
      builder.localAdds(
          properties.getLocalAddsMaxEntries() != null
              ? properties.getLocalAddsMaxEntries()
              : BloomFilterWatcher.DEFAULT_LOCAL_ADDS_MAX_ENTRIES,
          properties.getLocalAddsTtl() != null
              ? properties.getLocalAddsTtl()
              : BloomFilterWatcher.DEFAULT_LOCAL_ADDS_TTL);
    }
    if (properties.getLocalAddsMaxKeyLength() != null) {
      builder.localAddsMaxKeyLength(properties.getLocalAddsMaxKeyLength());
    }
    if (properties.getReaderReports() != null) {
      builder.readerReports(properties.getReaderReports());
    }
    if (properties.getReaderReportInterval() != null) {
      builder.readerReportInterval(properties.getReaderReportInterval());
    }
    return builder.start();
  }

  private static LiveBloomFilter<?> fixed(BloomFilterProperties properties) {
    List<String> keys = properties.getFixedKeys();
    if (properties.getKeyType() == KeyType.LONG) {
      List<Long> longs = keys.stream().map(key -> Long.parseLong(key.strip())).toList();
      return LiveBloomFilter.fixed(properties.getName(), LiveKeyType.LONG, longs);
    }
    return LiveBloomFilter.fixed(properties.getName(), LiveKeyType.STRING, keys);
  }

  private synchronized KubernetesClient client() {
    KubernetesClient shared = applicationClient.getIfUnique();
    if (shared != null) {
      return shared;
    }
    if (ownClient == null) {
      ownClient = new KubernetesClientBuilder().build();
    }
    return ownClient;
  }

  /** Whether this factory built (and will close) a client of its own. */
  synchronized boolean ownsClient() {
    return ownClient != null;
  }

  @Override
  public synchronized void destroy() {
    if (ownClient != null) {
      ownClient.close();
      ownClient = null;
    }
  }

  /**
   * Reads a trusted key, bounded before it is held in memory. The error names the property and the
   * resource, never the content.
   */
  private static PublicKey readKey(String bean, Resource resource) {
    String where =
        BloomFilterPropertiesValidator.prefix(bean)
            + "trusted-keys ("
            + resource.getDescription()
            + ")";
    byte[] pem;
    try (InputStream in = resource.getInputStream()) {
      pem = in.readNBytes(MAX_KEY_BYTES + 1);
    } catch (IOException e) {
      throw new IllegalStateException(
          where + ": cannot be read: " + e.getClass().getSimpleName(), e);
    }
    if (pem.length > MAX_KEY_BYTES) {
      throw new IllegalStateException(
          where + ": larger than " + MAX_KEY_BYTES + " bytes, not a PEM public key");
    }
    try {
      return Ed25519Keys.readPublicKey(new String(pem, StandardCharsets.US_ASCII));
    } catch (InvalidKeyException | IllegalArgumentException e) {
      throw new IllegalStateException(where + ": not an Ed25519 public key in PEM form");
    }
  }
}
