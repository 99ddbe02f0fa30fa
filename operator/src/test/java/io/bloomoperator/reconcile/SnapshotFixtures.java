package io.bloomoperator.reconcile;

import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.status.ReadyCondition;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Test helpers shared by the operator tests: apply a resource, wait for a status, read what the
 * operator published as any client of the API server would.
 */
public final class SnapshotFixtures {

  private SnapshotFixtures() {}

  public static BloomFilter apply(KubernetesClient client, String namespace, String yaml) {
    return client
        .resources(BloomFilter.class)
        .inNamespace(namespace)
        .resource(Serialization.unmarshal(yaml, BloomFilter.class))
        .create();
  }

  public static ConfigMap sourceConfigMap(
      KubernetesClient client, String namespace, String name, String key, List<String> lines) {
    return client
        .configMaps()
        .inNamespace(namespace)
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withData(Map.of(key, String.join("\n", lines) + "\n"))
                .build())
        .serverSideApply();
  }

  public static BloomFilter awaitStatus(
      KubernetesClient client, String namespace, String name, Predicate<BloomFilter> condition) {
    return await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(200))
        .until(
            () -> client.resources(BloomFilter.class).inNamespace(namespace).withName(name).get(),
            f -> f != null && f.getStatus() != null && condition.test(f));
  }

  public static boolean ready(BloomFilter filter, String status, String reason) {
    return ReadyCondition.of(filter)
        .filter(
            c ->
                status.equals(c.getStatus())
                    && (reason == null || reason.equals(c.getReason()))
                    && filter.getMetadata().getGeneration().equals(c.getObservedGeneration()))
        .isPresent();
  }

  public static Manifest manifest(KubernetesClient client, String namespace, String filter)
      throws Exception {
    ConfigMap cm =
        client
            .configMaps()
            .inNamespace(namespace)
            .withName(SnapshotNames.manifestName(filter))
            .get();
    return SnapshotConfigMaps.readManifest(cm).manifest();
  }

  /** The payload: every chunk named by the manifest, fetched by name and concatenated. */
  public static byte[] payload(KubernetesClient client, String namespace, Manifest manifest) {
    SnapshotDecoder.ChunkSource chunks = SnapshotConfigMaps.chunkSource(client, namespace);
    try {
      if (manifest.chained()) {
        // The version's whole payload: base plus chain, verified against the manifest's digest
        // (SnapshotDeltaTest pins the decoder against Guava).
        return io.bloomoperator.snapshot.SnapshotEncoder.toByteArray(
            SnapshotDecoder.decode(manifest, chunks));
      }
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      for (int i = 0; i < manifest.chunks().size(); i++) {
        out.writeBytes(chunks.load(i, manifest.chunks().get(i)));
      }
      return out.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (io.bloomoperator.snapshot.SnapshotVerificationException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Names of every chunk ConfigMap a manifest names: its base's and its deltas'. */
  public static List<String> namedChunks(Manifest manifest) {
    List<String> names = new java.util.ArrayList<>();
    manifest.chunks().forEach(c -> names.add(c.name()));
    manifest.deltas().forEach(d -> d.chunks().forEach(c -> names.add(c.name())));
    return names;
  }

  /** Names of the chunk ConfigMaps of a filter that exist now. */
  public static List<String> chunkNames(KubernetesClient client, String namespace, String filter) {
    return client
        .configMaps()
        .inNamespace(namespace)
        .withLabelSelector(SnapshotNames.chunkSelector(filter))
        .list()
        .getItems()
        .stream()
        .map(cm -> cm.getMetadata().getName())
        .sorted()
        .toList();
  }

  /** Every snapshot ConfigMap (manifest and chunks) of a filter that exists now. */
  public static List<ConfigMap> snapshotConfigMaps(
      KubernetesClient client, String namespace, String filter) {
    return client
        .configMaps()
        .inNamespace(namespace)
        .withLabelSelector(SnapshotNames.filterSelector(filter))
        .list()
        .getItems();
  }

  /**
   * Changes a BloomFilter with a JSON merge patch. Unlike {@code edit}, it carries no
   * resourceVersion, so the operator's status writes in between cannot make it fail with 409.
   */
  public static void mergePatch(
      KubernetesClient client, String namespace, String name, Map<String, Object> patch) {
    client
        .resources(BloomFilter.class)
        .inNamespace(namespace)
        .withName(name)
        .patch(
            io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
            io.fabric8.kubernetes.client.utils.Serialization.asJson(patch));
  }

  /**
   * Replaces the keys of the ConfigMap source {@code name} (key {@code name}) and asks the operator
   * to rebuild filter {@code name} at once (a ConfigMap source is otherwise checked every
   * refreshInterval).
   */
  public static void changeKeys(
      KubernetesClient client, String namespace, String name, List<String> keys) {
    sourceConfigMap(client, namespace, name, name, keys);
    mergePatch(
        client,
        namespace,
        name,
        Map.of(
            "metadata",
            Map.of(
                "annotations",
                Map.of("bloomoperator.io/rebuild", Long.toString(System.nanoTime())))));
  }

  /** A Guava filter with the manifest's numBits and k and no keys, built through Guava itself. */
  public static com.google.common.hash.BloomFilter<CharSequence> emptyGuavaFilter(Manifest manifest)
      throws IOException {
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    java.io.DataOutputStream out = new java.io.DataOutputStream(bytes);
    out.writeByte(1); // MURMUR128_MITZ_64
    out.writeByte(manifest.numHashFunctions());
    out.writeInt((int) (manifest.numBits() / 64));
    out.write(new byte[(int) (manifest.numBits() / 8)]);
    return com.google.common.hash.BloomFilter.readFrom(
        new java.io.ByteArrayInputStream(bytes.toByteArray()),
        com.google.common.hash.Funnels.stringFunnel(java.nio.charset.StandardCharsets.UTF_8));
  }
}
