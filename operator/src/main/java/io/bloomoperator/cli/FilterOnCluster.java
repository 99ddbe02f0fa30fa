package io.bloomoperator.cli;

import io.bloomoperator.api.BloomFilter;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.net.HttpURLConnection;
import java.nio.file.Path;
import java.util.Map;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The BloomFilter {@code status} and {@code rebuild} act on, and how to reach it: its name, and the
 * namespace, kubeconfig and context as kubectl takes them. Shared as a picocli mixin.
 */
final class FilterOnCluster {

  /** One request on the BloomFilter's resource. */
  @FunctionalInterface
  interface Request<T> {
    T send(Resource<BloomFilter> filter);
  }

  /** One request with the client, in the BloomFilter's namespace. */
  @FunctionalInterface
  interface ClientRequest<T> {
    T send(KubernetesClient client, String namespace);
  }

  @Parameters(paramLabel = "<name>", description = "The BloomFilter's name.")
  String name;

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

  private String resolvedNamespace;

  /**
   * Sends {@code request}; an API error becomes a one-line {@link CliException} that starts with
   * {@code doing} (e.g. "reading"), a missing BloomFilter says so.
   */
  <T> T send(String doing, Request<T> request) throws CliException {
    return sendWith(
        doing,
        (client, ns) ->
            request.send(client.resources(BloomFilter.class).inNamespace(ns).withName(name)));
  }

  /** {@link #send} for a request that reads more than the BloomFilter itself. */
  <T> T sendWith(String doing, ClientRequest<T> request) throws CliException {
    Config config = KubeconfigFile.config(kubeconfig, context);
    resolvedNamespace =
        namespace != null
            ? namespace
            : config.getNamespace() != null ? config.getNamespace() : "default";
    try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build()) {
      return request.send(client, resolvedNamespace);
    } catch (KubernetesClientException e) {
      if (e.getCode() == HttpURLConnection.HTTP_NOT_FOUND) {
        throw notFound();
      }
      throw new CliException(
          doing
              + " BloomFilter "
              + qualifiedName()
              + " at "
              + config.getMasterUrl()
              + " failed: "
              + e.getMessage(),
          e);
    }
  }

  /**
   * Sends one JSON merge patch of the BloomFilter: no read-modify-write, so it needs only patch and
   * cannot undo a concurrent edit of other fields; a null value removes its field.
   */
  void mergePatch(String doing, Map<String, Object> patch) throws CliException {
    String json = Serialization.asJson(patch);
    send(doing, filter -> filter.patch(PatchContext.of(PatchType.JSON_MERGE), json));
  }

  /** {@code namespace/name}, once {@link #send} has resolved the namespace. */
  String qualifiedName() {
    return resolvedNamespace + "/" + name;
  }

  CliException notFound() {
    return new CliException("BloomFilter " + qualifiedName() + " not found");
  }
}
