package io.bloomoperator.lookup;

import io.bloomoperator.snapshot.Ed25519Keys;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.bloomoperator.watch.ObjectStore;
import io.bloomoperator.watch.metrics.LiveBloomFilterMetrics;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.InvalidKeyException;
import java.security.PublicKey;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A running lookup sidecar: one {@link LiveBloomFilter} per configured filter, started with
 * sidecar-lib's builder from the {@link SidecarConfig}, and the {@link LookupServer} answering for
 * them. {@link LookupSidecarMain} runs one as a process; tests start one in-process.
 */
public final class LookupSidecar implements AutoCloseable {

  /** A trusted key file holds one PEM public key: a few hundred bytes. More is not a key. */
  static final int MAX_KEY_FILE_BYTES = 16 * 1024;

  private final List<LiveBloomFilter<?>> filters;
  private final LookupServer server;

  private final LookupServer health; // null without --health-port
  private final List<AutoCloseable> stores; // closed after the filters that read from them

  private LookupSidecar(
      List<LiveBloomFilter<?>> filters,
      LookupServer server,
      LookupServer health,
      List<AutoCloseable> stores) {
    this.filters = filters;
    this.server = server;
    this.health = health;
    this.stores = stores;
  }

  /**
   * Starts watching every filter and serving them; returns without waiting for a first snapshot
   * ({@code /readyz} says when all have one). The client is the caller's and is not closed.
   *
   * @param environment where {@code POD_NAMESPACE} is read from for filters without a namespace
   * @throws IllegalArgumentException if a setting is refused (a trusted key file that is not a key,
   *     a name sidecar-lib refuses, no namespace to be found)
   * @throws IOException if the port cannot be bound
   */
  public static LookupSidecar start(
      SidecarConfig config, KubernetesClient client, Map<String, String> environment)
      throws IOException {
    // Checked again here, not only when parsing: whoever builds a config in code gets the rule too.
    SidecarConfig.checkBindAddress(config.bindAddress(), config.allowNonLoopback());
    List<PublicKey> keys = new ArrayList<>();
    for (Path file : config.trustedKeyFiles()) {
      keys.add(readKey(file));
    }
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    new JvmMemoryMetrics().bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    Map<String, LiveBloomFilter<?>> byName = new LinkedHashMap<>();
    List<LiveBloomFilter<?>> started = new ArrayList<>();
    // One store client per configured store, shared by every filter (its fetch threads too).
    Map<String, ObjectStore> stores = new LinkedHashMap<>();
    try {
      for (ObjectStoreSpec spec : config.objectStores()) {
        stores.put(spec.name(), S3Stores.open(spec));
      }
      for (FilterSpec spec : config.filters()) {
        LiveBloomFilter<?> filter =
            startFilter(
                spec, namespaceOf(spec, config, client, environment), config, keys, stores, client);
        started.add(filter);
        byName.put(spec.name(), filter);
        new LiveBloomFilterMetrics(filter).bindTo(registry);
      }
      LookupServer.configureJdkServer(config.requestTimeout(), config.maxConnections());
      LookupServer server =
          new LookupServer(
              new InetSocketAddress(InetAddress.getByName(config.bindAddress()), config.port()),
              byName,
              registry,
              config.threads(),
              config.queue());
      server.start();
      LookupServer health = null;
      if (config.healthPort().isPresent()) {
        try {
          health =
              new LookupServer(
                  new InetSocketAddress(
                      InetAddress.getByName(config.healthBindAddress()), config.healthPort().get()),
                  byName,
                  registry,
                  2,
                  16,
                  false);
        } catch (IOException | RuntimeException e) {
          server.close();
          throw e;
        }
        health.start();
      }
      return new LookupSidecar(List.copyOf(started), server, health, closeables(stores));
    } catch (IOException | RuntimeException e) {
      started.forEach(LiveBloomFilter::close);
      closeAll(closeables(stores));
      throw e;
    }
  }

  private static List<AutoCloseable> closeables(Map<String, ObjectStore> stores) {
    List<AutoCloseable> closeables = new ArrayList<>();
    for (ObjectStore store : stores.values()) {
      if (store instanceof AutoCloseable c) {
        closeables.add(c);
      }
    }
    return closeables;
  }

  private static void closeAll(List<AutoCloseable> closeables) {
    for (AutoCloseable c : closeables) {
      try {
        c.close();
      } catch (Exception e) {
        // Stopping: nothing is read from a store any more; its threads are daemons.
      }
    }
  }

  private static String namespaceOf(
      FilterSpec spec,
      SidecarConfig config,
      KubernetesClient client,
      Map<String, String> environment) {
    if (spec.namespace().isPresent()) {
      return spec.namespace().get();
    }
    if (config.defaultNamespace().isPresent()) {
      return config.defaultNamespace().get();
    }
    String pod = environment.get(BloomFilterWatcher.ENV_POD_NAMESPACE);
    if (pod != null && !pod.isBlank()) {
      return pod;
    }
    String fromClient = client.getNamespace();
    if (fromClient != null && !fromClient.isBlank()) {
      return fromClient;
    }
    throw new IllegalArgumentException(
        "filter '"
            + spec.name()
            + "' has no namespace: give namespace/name, --namespace, or POD_NAMESPACE (the"
            + " downward API's metadata.namespace)");
  }

  /** Maps the settings onto sidecar-lib's builder; sidecar-lib's defaults stand for the rest. */
  private static LiveBloomFilter<?> startFilter(
      FilterSpec spec,
      String namespace,
      SidecarConfig config,
      List<PublicKey> keys,
      Map<String, ObjectStore> stores,
      KubernetesClient client) {
    BloomFilterWatcher.Builder<?> builder =
        BloomFilterWatcher.builder(client, namespace, spec.name(), LiveKeyType.of(spec.keyType()))
            .beforeFirstSnapshot(spec.failMode().orElse(config.failMode()))
            .readerReports(config.readerReports());
    keys.forEach(builder::trustedKey);
    stores.forEach(builder::objectStore);
    config.maxManifestAge().ifPresent(builder::maxManifestAge);
    config.maxSnapshotBytes().ifPresent(builder::maxSnapshotBytes);
    config.maxChunks().ifPresent(builder::maxChunks);
    config.resync().ifPresent(builder::resync);
    config.localCacheDir().ifPresent(builder::localSnapshotDirectory);
    builder.memoryMapped(config.memoryMapped());
    if (config.fileMode()) {
      builder.shareLocalSnapshot(config.fileInterval());
    }
    if (config.localAddsMaxEntries().isPresent() || config.localAddsTtl().isPresent()) {
      builder.localAdds(
          config.localAddsMaxEntries().orElse(BloomFilterWatcher.DEFAULT_LOCAL_ADDS_MAX_ENTRIES),
          config.localAddsTtl().orElse(BloomFilterWatcher.DEFAULT_LOCAL_ADDS_TTL));
    }
    config.localAddsMaxKeyLength().ifPresent(builder::localAddsMaxKeyLength);
    return builder.start();
  }

  /** Reads a trusted key, bounded before it is held; the error names the file, not its content. */
  private static PublicKey readKey(Path file) throws IOException {
    byte[] pem;
    try (InputStream in = Files.newInputStream(file)) {
      pem = in.readNBytes(MAX_KEY_FILE_BYTES + 1);
    }
    if (pem.length > MAX_KEY_FILE_BYTES) {
      throw new IllegalArgumentException(
          "trusted key file " + file + ": larger than " + MAX_KEY_FILE_BYTES + " bytes, not a key");
    }
    try {
      return Ed25519Keys.readPublicKey(new String(pem, StandardCharsets.US_ASCII));
    } catch (InvalidKeyException | IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "trusted key file " + file + ": not an Ed25519 public key in PEM form");
    }
  }

  /** The address the server listens on, with the real port when 0 was asked for. */
  public InetSocketAddress address() {
    return server.address();
  }

  /** The address of the health listener ({@code --health-port}), if there is one. */
  public java.util.Optional<InetSocketAddress> healthAddress() {
    return java.util.Optional.ofNullable(health).map(LookupServer::address);
  }

  /** The filters served, in the order configured. */
  public List<LiveBloomFilter<?>> filters() {
    return filters;
  }

  /** Stops the server, then the filters. */
  @Override
  public void close() {
    server.close();
    if (health != null) {
      health.close();
    }
    filters.forEach(LiveBloomFilter::close);
    closeAll(stores);
  }
}
