package io.bloomoperator.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.OperatorMain;
import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.status.ReadyCondition;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Two replicas with leader election: exactly one reconciles, the other takes over when it goes;
 * health and metrics endpoints tell which is which.
 */
@RealKubernetes(crdDirs = "crds")
class OperatorRuntimeTest {

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  /** One operator process as deployed: own client, registry, endpoints. */
  private record Replica(
      String identity, KubernetesClient client, Operator operator, HealthServer health)
      implements AutoCloseable {

    static Replica start(KubeCluster cluster, String namespace, String identity) throws Exception {
      KubernetesClient client = cluster.newClient();
      PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
      Operator operator =
          OperatorMain.start(
              client,
              OperatorSettings.defaults(),
              registry,
              new RuntimeOptions(0, true, namespace, identity, false, java.util.Set.of(namespace)));
      HealthServer health = HealthServer.start(0, operator, registry, () -> false);
      return new Replica(identity, client, operator, health);
    }

    String get(String path) throws Exception {
      HttpResponse<String> response =
          HTTP.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + health.port() + path))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      return response.statusCode() + " " + response.body();
    }

    double published() throws Exception {
      return get("/metrics")
          .lines()
          .filter(l -> l.startsWith("bloomoperator_published_total"))
          .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
          .sum();
    }

    @Override
    public void close() {
      operator.stop();
      health.close();
      client.close();
    }
  }

  @Test
  void onlyTheLeaderReconcilesAndAFollowerTakesOver(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) throws Exception {
    List<Replica> replicas = new ArrayList<>();
    try {
      replicas.add(Replica.start(cluster, ns.name(), "replica-a"));
      replicas.add(Replica.start(cluster, ns.name(), "replica-b"));

      String leader =
          await()
              .atMost(Duration.ofSeconds(30))
              .until(
                  () -> {
                    Lease lease =
                        client
                            .leases()
                            .inNamespace(ns.name())
                            .withName(RuntimeOptions.LEASE_NAME)
                            .get();
                    return lease == null ? null : lease.getSpec().getHolderIdentity();
                  },
                  holder -> holder != null);
      Replica leading =
          replicas.stream().filter(r -> r.identity().equals(leader)).findFirst().orElseThrow();
      Replica following = replicas.stream().filter(r -> r != leading).findFirst().orElseThrow();

      for (Replica r : replicas) {
        assertThat(r.get("/healthz")).startsWith("200");
        await()
            .atMost(Duration.ofSeconds(30))
            .untilAsserted(() -> assertThat(r.get("/readyz")).startsWith("200"));
      }

      create(client, ns, "first");
      awaitReady(client, ns, "first");
      assertThat(leading.published()).isEqualTo(1.0);
      assertThat(following.published()).as("the follower does not reconcile").isZero();
      assertThat(leading.get("/metrics")).contains("operator_sdk");

      leading.close();
      replicas.remove(leading);
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () ->
                  following
                      .identity()
                      .equals(
                          client
                              .leases()
                              .inNamespace(ns.name())
                              .withName(RuntimeOptions.LEASE_NAME)
                              .get()
                              .getSpec()
                              .getHolderIdentity()));
      create(client, ns, "second");
      awaitReady(client, ns, "second");
      assertThat(following.published()).isGreaterThanOrEqualTo(1.0);
    } finally {
      replicas.forEach(Replica::close);
    }
  }

  private static void create(KubernetesClient client, TestNamespace ns, String name) {
    client
        .resources(BloomFilter.class)
        .inNamespace(ns.name())
        .resource(
            Serialization.unmarshal(
                """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: %s}
        spec:
          falsePositiveRate: 0.01
          source: {inline: [a, b, c]}
        """
                    .formatted(name),
                BloomFilter.class))
        .create();
  }

  private static void awaitReady(KubernetesClient client, TestNamespace ns, String name) {
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> {
              BloomFilter f =
                  client.resources(BloomFilter.class).inNamespace(ns.name()).withName(name).get();
              return f != null
                  && ReadyCondition.of(f).map(c -> "True".equals(c.getStatus())).orElse(false);
            });
  }
}
