package io.bloomoperator;

import io.bloomoperator.reconcile.BloomFilterReconciler;
import io.bloomoperator.reconcile.OperatorSettings;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.Operator;
import java.time.Clock;
import java.time.Duration;

/** Runs the operator against the cluster of the current kubeconfig or service account. */
public final class OperatorMain {

  private OperatorMain() {
  }

  public static void main(String[] args) {
    KubernetesClient client = new KubernetesClientBuilder().build();
    Operator operator = start(client, OperatorSettings.fromEnvironment(System.getenv()));
    operator.installShutdownHook(Duration.ofSeconds(10));
  }

  /** Creates, registers and starts the operator; the caller stops it. */
  public static Operator start(KubernetesClient client, OperatorSettings settings) {
    Operator operator = new Operator(o -> o.withKubernetesClient(client)
        .withCloseClientOnStop(false));
    operator.register(new BloomFilterReconciler(settings, Clock.systemUTC()));
    operator.start();
    return operator;
  }
}
