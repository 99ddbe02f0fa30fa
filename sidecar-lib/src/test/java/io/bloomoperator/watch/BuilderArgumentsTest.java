package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Names an application passes in are checked before any request path is built from them. */
class BuilderArgumentsTest {

  private static KubernetesClient client;

  @BeforeAll
  static void client() {
    client = new KubernetesClientBuilder().build(); // never connects: nothing is started
  }

  @AfterAll
  static void close() {
    client.close();
  }

  @ParameterizedTest
  @ValueSource(strings = {"../secrets", "Ids", "a b", "ids/x", "-ids", "ids-", "ids%2f", "ä"})
  void filterNamesThatCannotNameAnObjectAreRefused(String name) {
    assertThatThrownBy(() -> BloomFilterWatcher.builder(client, "shop", name, LiveKeyType.STRING))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("filterName must be a Kubernetes name");
  }

  @ParameterizedTest
  @ValueSource(strings = {"shop.eu", "../shop", "Shop", "kube_system"})
  void namespacesThatCannotNameANamespaceAreRefused(String namespace) {
    assertThatThrownBy(
            () -> BloomFilterWatcher.builder(client, namespace, "ids", LiveKeyType.STRING))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("namespace must be a Kubernetes name");
  }

  @ParameterizedTest
  @ValueSource(strings = {"ids", "product-ids.v2", "a", "x1"})
  void kubernetesNamesAreAccepted(String name) {
    assertThatCode(() -> BloomFilterWatcher.builder(client, "shop", name, LiveKeyType.STRING))
        .doesNotThrowAnyException();
    assertThatCode(
            () -> BloomFilterWatcher.builder(client, "shop", "n".repeat(253), LiveKeyType.STRING))
        .doesNotThrowAnyException();
    assertThatThrownBy(
            () -> BloomFilterWatcher.builder(client, "shop", "n".repeat(254), LiveKeyType.STRING))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @ParameterizedTest
  @ValueSource(strings = {"Primary", "../primary", "primary/x", "-primary", "", "p_1"})
  void objectStoreNamesThatAreNotDnsLabelsAreRefused(String name) {
    ObjectStore store = new NoStore();
    assertThatThrownBy(
            () ->
                BloomFilterWatcher.builder(client, "shop", "ids", LiveKeyType.STRING)
                    .objectStore(name, store))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("DNS label");
  }

  @Test
  void anObjectStoreNameIsRegisteredOnce() {
    BloomFilterWatcher.Builder<String> builder =
        BloomFilterWatcher.builder(client, "shop", "ids", LiveKeyType.STRING)
            .objectStore("primary", new NoStore());
    assertThatThrownBy(() -> builder.objectStore("primary", new NoStore()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("already registered");
    assertThatCode(() -> builder.objectStore("secondary", new NoStore()))
        .doesNotThrowAnyException();
  }

  @Test
  void localAddBoundsAreCheckedAtOnce() {
    BloomFilterWatcher.Builder<String> builder =
        BloomFilterWatcher.builder(client, "shop", "ids", LiveKeyType.STRING);
    assertThatThrownBy(() -> builder.localAdds(-1, java.time.Duration.ofMinutes(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxEntries");
    assertThatThrownBy(() -> builder.localAdds(10, java.time.Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ttl");
    assertThatThrownBy(() -> builder.localAddsMaxKeyLength(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("localAddsMaxKeyLength");
    assertThatCode(() -> builder.localAdds(0, java.time.Duration.ofMillis(1)))
        .doesNotThrowAnyException(); // 0: local adds off
  }

  /** A store that is never read: the builder only checks names. */
  private static final class NoStore implements ObjectStore {
    @Override
    public String prefix() {
      return "";
    }

    @Override
    public Download open(java.util.List<Chunk> chunks) {
      throw new UnsupportedOperationException();
    }
  }
}
