package io.bloomoperator.lookup;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code java -jar bloom-lookup-sidecar.jar --filter [namespace/]name[:String|Long] ...}: runs a
 * {@link LookupSidecar} until the process is stopped (SIGTERM closes the server, then the filters).
 * The Kubernetes client is configured as fabric8 does by default: in a pod, its service account.
 * Exit status 2 for settings that are refused, 1 when it cannot start otherwise.
 */
public final class LookupSidecarMain {

  private static final Logger LOG = LoggerFactory.getLogger(LookupSidecarMain.class);

  private LookupSidecarMain() {}

  public static void main(String[] args) throws InterruptedException {
    SidecarConfig config;
    try {
      config = SidecarConfig.parse(args, System.getenv());
    } catch (IllegalArgumentException e) {
      System.err.println("bloom-lookup-sidecar: " + e.getMessage());
      System.exit(2);
      return;
    }
    KubernetesClient client = new KubernetesClientBuilder().build();
    LookupSidecar sidecar;
    try {
      sidecar = LookupSidecar.start(config, client, System.getenv());
    } catch (IllegalArgumentException e) {
      System.err.println("bloom-lookup-sidecar: " + e.getMessage());
      client.close();
      System.exit(2);
      return;
    } catch (Exception e) {
      LOG.error("cannot start", e);
      client.close();
      System.exit(1);
      return;
    }
    LOG.info(
        "serving {} filter(s) on http://{}:{}/",
        sidecar.filters().size(),
        sidecar.address().getHostString(),
        sidecar.address().getPort());
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  sidecar.close();
                  client.close();
                  stopped.countDown();
                },
                "bloom-lookup-shutdown"));
    stopped.await();
  }
}
