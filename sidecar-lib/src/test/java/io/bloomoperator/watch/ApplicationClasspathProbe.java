package io.bloomoperator.watch;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * An application in miniature, run by {@link ApplicationClasspathTest} in a JVM of its own whose
 * class path holds only what sidecar-lib brings an application: it builds a client the way the
 * README shows, loads a snapshot from the API server and answers lookups. Anything the slimmed
 * dependency set lacks at run time fails it (NoClassDefFoundError, no HTTP client found).
 *
 * <p>Arguments: kubeconfig path, namespace, filter name, then keys; prints one line per key.
 */
public final class ApplicationClasspathProbe {

  private ApplicationClasspathProbe() {}

  public static void main(String[] args) throws Exception {
    Config config =
        Config.fromKubeconfig(Files.readString(Path.of(args[0]), StandardCharsets.UTF_8));
    try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build();
        LiveBloomFilter<String> filter =
            BloomFilterWatcher.watch(client, args[1], args[2], LiveKeyType.STRING)) {
      if (!filter.awaitReady(Duration.ofSeconds(60))) {
        System.out.println("not ready");
        System.exit(2);
      }
      System.out.println("http client: " + client.getHttpClient().getClass().getName());
      for (int i = 3; i < args.length; i++) {
        System.out.println(args[i] + "=" + filter.mightContain(args[i]));
      }
    }
    System.exit(0);
  }
}
