package io.bloomoperator.examples.cacheguard;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.util.concurrent.CountDownLatch;

/**
 * Runs the service with settings from the environment (see {@link
 * CacheGuardConfig#fromEnvironment}); Kubernetes access from {@code KUBECONFIG} or, in a pod, the
 * service account. Stops cleanly on SIGTERM.
 */
public final class CacheGuardMain {

  private CacheGuardMain() {}

  /** Starts the service and blocks until the JVM is asked to stop. */
  public static void main(String[] args) throws InterruptedException {
    KubernetesClient client = new KubernetesClientBuilder().build();
    CacheGuardConfig config =
        CacheGuardConfig.fromEnvironment(System.getenv(), client.getNamespace());
    CacheGuard guard = CacheGuard.start(config, client);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  guard.close();
                  client.close();
                  stopped.countDown();
                },
                "cache-guard-stop"));
    stopped.await();
  }
}
