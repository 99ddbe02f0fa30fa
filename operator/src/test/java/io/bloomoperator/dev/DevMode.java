package io.bloomoperator.dev;

import io.bloomoperator.OperatorMain;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;

/**
 * Embedded dev mode: a real kube-apiserver + etcd (and kube-controller-manager) on this machine,
 * the CRD, the operator, and the example resources, with a kubeconfig to poke at it. Ctrl-C stops
 * everything. Run it with {@code bash hack/dev.sh}.
 */
public final class DevMode {

  static final String NAMESPACE = "demo";

  private DevMode() {}

  public static void main(String[] args) throws Exception {
    Path root = RealKubernetesExtension.repoRoot();
    KubeCluster cluster = KubeCluster.shared();
    cluster.installCrds(root.resolve("crds"));
    cluster.startControllerManager();
    Path kubeconfig = root.resolve("target").resolve("dev-kubeconfig.yaml");
    Files.createDirectories(kubeconfig.getParent());
    Files.copy(cluster.kubeconfig(), kubeconfig, java.nio.file.StandardCopyOption.REPLACE_EXISTING);

    KubernetesClient client = cluster.newClient();
    Operator operator = OperatorMain.start(client, OperatorSettings.defaults());

    client
        .namespaces()
        .resource(
            new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata().build())
        .serverSideApply();
    try (Stream<Path> files = Files.list(root.resolve("examples"))) {
      for (Path file : files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList()) {
        apply(client, file);
      }
    }

    CountDownLatch stop = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  System.out.println(
                      "\nstopping operator, kube-controller-manager, kube-apiserver and etcd");
                  operator.stop();
                  client.close();
                  cluster.close();
                  stop.countDown();
                },
                "dev-mode-stop"));

    String k = "kubectl --kubeconfig " + kubeconfig;
    System.out.println(
        """

        bloom-operator dev mode is running: a real kube-apiserver with the operator reconciling
        the examples/ resources in namespace %2$s. Try:

          export KUBECONFIG=%1$s
          kubectl get bloomfilters -n %2$s
          kubectl describe bf product-ids -n %2$s
          kubectl get configmaps -n %2$s -l app.kubernetes.io/managed-by=bloom-operator
          kubectl get events -n %2$s
          # change the source and watch a new version get published:
          kubectl patch configmap product-id-list -n %2$s --type merge \\
            -p '{"data":{"ids.txt":"sku-1001\\nsku-9999\\n"}}'
          kubectl get bf product-ids -n %2$s -w

        (%3$s works too.) Press Ctrl-C to stop everything.
        """
            .formatted(kubeconfig, NAMESPACE, k));
    stop.await();
  }

  private static void apply(KubernetesClient client, Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      List<HasMetadata> items = client.load(in).items();
      for (HasMetadata item : items) {
        item.getMetadata().setNamespace(NAMESPACE);
        client.resource(item).inNamespace(NAMESPACE).forceConflicts().serverSideApply();
        System.out.printf(
            "applied %s/%s from %s%n",
            item.getKind(), item.getMetadata().getName(), file.getFileName());
      }
    }
  }
}
