package io.bloomoperator.objectstore;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.manifest;
import static io.bloomoperator.reconcile.SnapshotFixtures.mergePatch;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.status.ReadyCondition;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.operator.TestOperators;
import io.bloomoperator.testing.operator.TestStores;
import io.bloomoperator.testing.servers.S3Server;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * DNS rebinding against a store's endpoint: the BloomStore names a host that resolves to the store
 * (an allowed address) while the operator checks it and publishes, and later to an address the
 * egress policy refuses (here 127.0.0.2, standing for the metadata endpoint, where a listener
 * counts what reaches it). The SDK resolves the name again for every new connection; each of those
 * resolutions must be judged, so the rebound connection is refused before it is made and the filter
 * reports StoreUnavailable naming the egress policy.
 */
@RealKubernetes(crdDirs = "crds")
class StoreDnsRebindingTest {

  private static final String OPERATOR_NAMESPACE = "bloom-s3dns-operator";
  private static final String HOST = "store.rebinding.test";

  private static final InetAddress ALLOWED = address("127.0.0.1");
  private static final InetAddress FORBIDDEN = address("127.0.0.2");

  /** What {@link #HOST} resolves to now. */
  private static final AtomicReference<InetAddress> ANSWER = new AtomicReference<>(ALLOWED);

  private static final AtomicInteger LOOKUPS = new AtomicInteger();

  private static final S3Server SERVER = S3Server.start();

  /** On the forbidden address, the store's port: counts every connection that reaches it. */
  private static final Canary CANARY = new Canary(FORBIDDEN, SERVER.port());

  @RegisterExtension
  @Order(1)
  static final InProcessOperator OPERATOR =
      TestOperators.withStore(SERVER, OPERATOR_NAMESPACE)
          .resolver(StoreDnsRebindingTest::resolve)
          .build();

  @AfterAll
  static void stop() throws IOException {
    CANARY.close();
    SERVER.close();
  }

  /** The test's DNS: {@link #HOST} as {@link #ANSWER} says, anything else as the system does. */
  private static InetAddress[] resolve(String host) throws UnknownHostException {
    if (HOST.equals(host)) {
      LOOKUPS.incrementAndGet();
      return new InetAddress[] {ANSWER.get()};
    }
    return InetAddress.getAllByName(host);
  }

  private static InetAddress address(String literal) {
    try {
      return InetAddress.getByName(literal);
    } catch (UnknownHostException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Accepts connections and counts them; answers nothing. */
  private static final class Canary implements AutoCloseable {
    private final ServerSocket socket;
    private final AtomicInteger accepted = new AtomicInteger();

    Canary(InetAddress address, int port) {
      try {
        socket = new ServerSocket();
        socket.bind(new InetSocketAddress(address, port));
      } catch (IOException e) {
        throw new UncheckedIOException("cannot listen on " + address + ":" + port, e);
      }
      Thread thread =
          new Thread(
              () -> {
                while (!socket.isClosed()) {
                  try (Socket s = socket.accept()) {
                    accepted.incrementAndGet();
                  } catch (IOException e) {
                    // closed
                  }
                }
              },
              "rebinding-canary");
      thread.setDaemon(true);
      thread.start();
    }

    int accepted() {
      return accepted.get();
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }

  private static List<String> keys(String tag) {
    return IntStream.range(0, 300).mapToObj(i -> tag + "-" + i).toList();
  }

  @Test
  void aStoreNameThatLaterResolvesToARefusedAddressIsNotConnectedTo(
      KubernetesClient client, TestNamespace ns) throws Exception {
    String store = "rebinding-" + System.nanoTime() % 100000;
    String bucket = SERVER.createBucket("rebind");
    TestStores.store(store)
        .at("http://" + HOST + ":" + SERVER.port(), bucket)
        .allowing(ns.name())
        .create(client);
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: f}
        spec:
          falsePositiveRate: 0.01
          snapshot: {store: %s, chunkSizeBytes: 1024, retainPreviousFor: 1s}
          source:
            inline: [%s]
        """
            .formatted(store, String.join(", ", keys("v1"))));
    awaitStatus(client, ns.name(), "f", f -> ready(f, "True", Reasons.PUBLISHED));
    Manifest first = manifest(client, ns.name(), "f");
    assertThat(LOOKUPS).as("the name was resolved by the test's DNS").hasPositiveValue();

    // The name now points elsewhere. Restarting the store drops the client's pooled
    // connections, so the next request needs a new connection, hence a new resolution.
    ANSWER.set(FORBIDDEN);
    SERVER.stop();
    SERVER.restart();
    int lookupsBefore = LOOKUPS.get();
    mergePatch(
        client, ns.name(), "f", Map.of("spec", Map.of("source", Map.of("inline", keys("v2")))));

    var refused =
        awaitStatus(client, ns.name(), "f", f -> ready(f, "False", Reasons.STORE_UNAVAILABLE));
    assertThat(LOOKUPS.get())
        .as("resolved again for the new connection")
        .isGreaterThan(lookupsBefore);
    assertThat(CANARY.accepted()).as("no connection reached the refused address").isZero();
    assertThat(ReadyCondition.of(refused).orElseThrow().getMessage())
        .contains(store)
        .contains("the store's endpoint resolved to an address the egress policy refuses")
        .doesNotContain("127.0.0")
        .doesNotContain(HOST);
    assertThat(manifest(client, ns.name(), "f"))
        .as("the published version keeps serving")
        .isEqualTo(first);
  }
}
