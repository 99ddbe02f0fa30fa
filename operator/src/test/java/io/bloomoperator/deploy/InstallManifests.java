package io.bloomoperator.deploy;

import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The objects an install variant really creates: its kustomization rendered by {@code kubectl
 * kustomize}, as {@code kubectl apply -k} would, so tests see the same RBAC an administrator gets.
 */
final class InstallManifests {

  private final List<HasMetadata> items;

  private InstallManifests(List<HasMetadata> items) {
    this.items = items;
  }

  /** Renders the kustomization in {@code dir} with the kubectl beside the test binaries. */
  static InstallManifests render(KubeCluster cluster, KubernetesClient client, Path dir) {
    try {
      Path errors = Files.createTempFile("kustomize", ".err");
      try {
        // stderr apart: a kustomize warning must not end up in the YAML.
        Process process =
            new ProcessBuilder(cluster.kubectl(), "kustomize", dir.toString())
                .redirectError(errors.toFile())
                .start();
        byte[] yaml = process.getInputStream().readAllBytes();
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
          throw new IllegalStateException(
              "kubectl kustomize " + dir + " failed: " + Files.readString(errors));
        }
        return new InstallManifests(client.load(new ByteArrayInputStream(yaml)).items());
      } finally {
        Files.deleteIfExists(errors);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * The reader RBAC pointed at an application as deploy/reader-rbac/kustomization.yaml tells users
   * to: that file copied into {@code dir} with its namespace, ServiceAccount and path to {@code
   * base/} changed, and one {@code add} operation per further account. Returns {@code dir}, for
   * {@link #render} or {@code kubectl apply -k}.
   */
  static Path readerRbacOverlay(Path dir, String namespace, String... accounts) {
    try {
      Path shipped = RealKubernetesExtension.repoRoot().resolve("deploy/reader-rbac");
      // kustomize takes a base by relative path only.
      String base = dir.toRealPath().relativize(shipped.resolve("base").toRealPath()).toString();
      String yaml = Files.readString(shipped.resolve("kustomization.yaml"));
      yaml = replaceOnce(yaml, "namespace: shop ", "namespace: " + namespace + " ");
      yaml = replaceOnce(yaml, "\n  - base\n", "\n  - " + base + "\n");
      yaml = replaceOnce(yaml, "value: product-service}", "value: " + accounts[0] + "}");
      StringBuilder more = new StringBuilder(yaml.stripTrailing());
      for (int i = 1; i < accounts.length; i++) {
        more.append("\n      - {op: add, path: /subjects/-, value: {kind: ServiceAccount, name: ")
            .append(accounts[i])
            .append("}}");
      }
      Files.writeString(dir.resolve("kustomization.yaml"), more.append('\n').toString());
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String replaceOnce(String text, String from, String to) {
    int at = text.indexOf(from);
    if (at < 0 || text.indexOf(from, at + 1) >= 0) {
      throw new IllegalStateException(
          "deploy/reader-rbac/kustomization.yaml no longer holds '" + from + "' once");
    }
    return text.replace(from, to);
  }

  List<HasMetadata> items() {
    return items;
  }

  <T extends HasMetadata> List<T> all(Class<T> kind) {
    return items.stream().filter(kind::isInstance).map(kind::cast).toList();
  }

  /** The one object of that kind and name (in any namespace). */
  <T extends HasMetadata> T one(Class<T> kind, String name) {
    List<T> found =
        all(kind).stream().filter(item -> item.getMetadata().getName().equals(name)).toList();
    if (found.size() != 1) {
      throw new AssertionError(found.size() + " " + kind.getSimpleName() + " named " + name);
    }
    return found.get(0);
  }

  Deployment deployment() {
    return one(Deployment.class, "bloom-operator");
  }

  /** The value of one of the operator container's environment variables, or null. */
  String env(String name) {
    return deployment().getSpec().getTemplate().getSpec().getContainers().stream()
        .filter(c -> c.getName().equals("operator"))
        .findFirst()
        .orElseThrow()
        .getEnv()
        .stream()
        .filter(e -> e.getName().equals(name))
        .map(e -> e.getValue())
        .filter(Objects::nonNull)
        .findFirst()
        .orElse(null);
  }

  /**
   * Creates what the operator runs under: the namespaces, ServiceAccount and RBAC objects. The CRD
   * is installed by the test extension; the Deployment is replaced by an in-process operator.
   */
  void applyIdentityAndRbac(KubernetesClient admin) {
    items.stream()
        .filter(item -> !(item instanceof CustomResourceDefinition || item instanceof Deployment))
        .forEach(item -> admin.resource(item).forceConflicts().serverSideApply());
  }

  /**
   * Deletes the cluster-wide install's ClusterRole and ClusterRoleBinding, as an administrator
   * switching to the namespaced install must ({@code kubectl apply} does not prune them).
   */
  static void removeClusterWideGrant(KubernetesClient admin) {
    admin.rbac().clusterRoleBindings().withName("bloom-operator").delete();
    admin.rbac().clusterRoles().withName("bloom-operator").delete();
    admin
        .rbac()
        .clusterRoleBindings()
        .withName("bloom-operator")
        .waitUntilCondition(Objects::isNull, 30, TimeUnit.SECONDS);
  }

  /**
   * A client acting as the installed operator's ServiceAccount, with the groups the API server
   * gives a pod's token, so that RBAC decides exactly as for the Deployment.
   */
  static KubernetesClient asOperator(KubeCluster cluster) {
    return asServiceAccount(cluster, "bloom-operator", "bloom-operator");
  }

  /** A client acting as ServiceAccount {@code namespace/name}, as a pod running under it. */
  static KubernetesClient asServiceAccount(KubeCluster cluster, String namespace, String name) {
    Config config = cluster.clientConfig();
    config.setImpersonateUsername("system:serviceaccount:" + namespace + ":" + name);
    config.setImpersonateGroups(
        "system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated");
    return new KubernetesClientBuilder().withConfig(config).build();
  }
}
