package io.bloomoperator.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.StoreObjectKeys;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.ObjectStore;
import io.bloomoperator.watch.TestKeys;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The application's {@link ObjectStore} beans are the stores its filter beans read, by bean name: a
 * manifest naming the store {@code primary} is read from the bean {@code primary}.
 */
@RealKubernetes
class ObjectStoreBeanTest {

  /** Objects in memory, by key: enough to see which store a filter reads. */
  static final class MemoryStore implements ObjectStore {
    final Map<String, byte[]> objects = new ConcurrentHashMap<>();

    @Override
    public String prefix() {
      return "bloom";
    }

    @Override
    public Download open(List<Chunk> chunks) {
      return new Download() {
        @Override
        public byte[] load(int position) {
          return objects.get(chunks.get(position).key());
        }

        @Override
        public void close() {}
      };
    }
  }

  @Test
  void aFilterBeanReadsAManifestsStoreFromTheObjectStoreBeanOfThatName(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) throws Exception {
    MemoryStore store = new MemoryStore();
    BloomFilterBits bits = TestKeys.longFilter(100, new long[] {7, 8, 9});
    String directory = StoreObjectKeys.filterDirectory(store.prefix(), ns.name(), "ids");
    SnapshotEncoder.Result encoded =
        SnapshotEncoder.encode(
            bits,
            64,
            (index, data, length, sha) ->
                store.objects.put(
                    StoreObjectKeys.key(directory, "ids-bloom-v1-" + index, sha),
                    Arrays.copyOf(data, length)));
    Manifest manifest = Manifest.of("ids", 1, bits, 3, encoded, Instant.now()).inStore("primary");
    client
        .configMaps()
        .inNamespace(ns.name())
        .resource(SnapshotConfigMaps.manifest(ns.name(), manifest, null, null))
        .create();

    KubernetesClient applicationClient = cluster.newClient();
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(BloomFilterAutoConfiguration.class))
        .withBean(KubernetesClient.class, () -> applicationClient)
        .withBean("primary", ObjectStore.class, () -> store)
        .withPropertyValues(
            "bloom.filters.ids.name=ids",
            "bloom.filters.ids.namespace=" + ns.name(),
            "bloom.filters.ids.key-type=Long")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              @SuppressWarnings("unchecked")
              LiveBloomFilter<Long> filter = (LiveBloomFilter<Long>) context.getBean("ids");
              assertThat(filter.awaitReady(Duration.ofSeconds(15))).isTrue();
              assertThat(filter.mightContain(7L)).isTrue();
              assertThat(filter.currentVersion()).isEqualTo(1);
            });
  }
}
