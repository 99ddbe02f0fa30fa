package io.bloomoperator.objectstore;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.manifest;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static io.bloomoperator.reconcile.SnapshotFixtures.sourceConfigMap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.source.EgressPolicy;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.operator.TestOperators;
import io.bloomoperator.testing.operator.TestStores;
import io.bloomoperator.testing.servers.S3Server;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Stores have an egress policy of their own (BLOOM_STORE_ALLOW/DENY): the administrator admits a
 * private store endpoint (here versitygw on loopback, which the default policy refuses) without
 * admitting it for tenants' sources. With one list for both, the address that lets the operator
 * reach the store would let every BloomFilter author's http source reach it, and whatever else
 * listens there, too.
 */
@RealKubernetes(crdDirs = "crds")
class StoreEgressTest {

  private static final String OPERATOR_NAMESPACE = "bloom-store-egress-operator";

  private static final S3Server SERVER = S3Server.start();

  @RegisterExtension
  @Order(1)
  static final InProcessOperator OPERATOR =
      // Sources keep the default policy (loopback refused); stores get their own.
      TestOperators.withStore(SERVER, OPERATOR_NAMESPACE)
          .unset("BLOOM_HTTP_ALLOW")
          .setting("BLOOM_STORE_ALLOW", TestOperators.LOOPBACK)
          .setting("BLOOM_MIN_PUBLISH_INTERVAL", "0")
          .build();

  @AfterAll
  static void stopServer() {
    SERVER.close();
  }

  @Test
  void aStoreAdmittedForStoresIsNotAdmittedForSources(KubernetesClient client, TestNamespace ns)
      throws Exception {
    String storeName = "egress-" + System.nanoTime() % 100000;
    TestStores.store(storeName)
        .on(SERVER, SERVER.createBucket("egress"))
        .allowing(ns.name())
        .create(client);
    sourceConfigMap(client, ns.name(), "ids", "ids", List.of("a", "b", "c"));
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: stored}
        spec:
          falsePositiveRate: 0.01
          source:
            configMap: {name: ids, key: ids}
          snapshot: {store: %s}
        """
            .formatted(storeName));
    awaitStatus(client, ns.name(), "stored", f -> ready(f, "True", Reasons.PUBLISHED));
    assertThat(manifest(client, ns.name(), "stored").store()).isEqualTo(storeName);

    // The same address class for a tenant's source: refused before any byte is sent, whether it
    // names the store's own endpoint or another server there.
    AtomicInteger requests = new AtomicInteger();
    HttpServer other =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    other.createContext(
        "/",
        exchange -> {
          requests.incrementAndGet();
          byte[] body = "secret-key\n".getBytes(StandardCharsets.UTF_8);
          exchange.sendResponseHeaders(200, body.length);
          exchange.getResponseBody().write(body);
          exchange.close();
        });
    other.start();
    try {
      for (String[] source :
          List.of(
              new String[] {"to-store", SERVER.endpoint() + "/"},
              new String[] {
                "to-other", "http://127.0.0.1:" + other.getAddress().getPort() + "/"
              })) {
        apply(
            client,
            ns.name(),
            """
            apiVersion: bloomoperator.io/v1alpha1
            kind: BloomFilter
            metadata: {name: %s}
            spec:
              falsePositiveRate: 0.01
              source:
                http: {url: "%s"}
            """
                .formatted(source[0], source[1]));
        awaitStatus(
            client,
            ns.name(),
            source[0],
            f -> ready(f, "False", Reasons.SOURCE_ADDRESS_NOT_ALLOWED));
      }
      assertThat(requests).as("requests that reached the other loopback server").hasValue(0);
    } finally {
      other.stop(0);
    }
  }

  @Test
  void theStoresPolicyIsTheirOwnOnlyWhenSet() {
    EgressPolicy sources = EgressPolicy.defaults();
    assertThat(StoreSettings.fromEnvironment(Map.of()).egressOr(sources)).isSameAs(sources);
    assertThat(
            StoreSettings.fromEnvironment(Map.of("BLOOM_STORE_DENY", "10.0.0.0/8"))
                .egressOr(sources))
        .isNotSameAs(sources);
    assertThatThrownBy(
            () -> StoreSettings.fromEnvironment(Map.of("BLOOM_STORE_ALLOW", "10.0.0.0/99")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("BLOOM_STORE_ALLOW");
  }
}
