package io.bloomoperator.cli;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * How {@code status} and {@code rebuild} reach a BloomFilter: the kubeconfig, its context and the
 * namespace, as kubectl takes them. Shared as a picocli mixin.
 */
final class ClusterOptions {

  @Option(
      names = {"-n", "--namespace"},
      paramLabel = "<ns>",
      description =
          "The BloomFilter's namespace (default: the kubeconfig context's, else default).")
  String namespace;

  @Option(
      names = "--kubeconfig",
      paramLabel = "<path>",
      description =
          "Kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or the pod's service account).")
  Path kubeconfig;

  @Option(
      names = "--context",
      paramLabel = "<context>",
      description = "Kubeconfig context to use (default: the current one).")
  String context;

  /** The client configuration these options select. */
  Config config() throws CliException {
    return KubeconfigFile.config(kubeconfig, context);
  }

  /** The namespace given, else the context's, else {@code default}. */
  String namespace(Config config) {
    if (namespace != null) {
      return namespace;
    }
    return config.getNamespace() != null ? config.getNamespace() : "default";
  }

  static KubernetesClient client(Config config) {
    return new KubernetesClientBuilder().withConfig(config).build();
  }
}
