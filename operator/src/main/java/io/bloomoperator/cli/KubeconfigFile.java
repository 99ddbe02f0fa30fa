package io.bloomoperator.cli;

import io.fabric8.kubernetes.client.Config;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The client configuration of the CLI's cluster commands, from a kubeconfig as kubectl reads it.
 */
final class KubeconfigFile {

  private KubeconfigFile() {}

  /**
   * {@code kubeconfig} when given (it must be readable), else $KUBECONFIG, ~/.kube/config or the
   * pod's service account; {@code context} or the current one.
   */
  static Config config(Path kubeconfig, String context) throws CliException {
    if (kubeconfig == null) {
      return Config.autoConfigure(context);
    }
    if (!Files.isReadable(kubeconfig)) {
      throw new CliException("kubeconfig " + kubeconfig + " does not exist or is not readable");
    }
    return Config.fromKubeconfig(context, kubeconfig.toFile());
  }
}
