package io.bloomoperator.objectstore;

import io.bloomoperator.api.BloomStore;
import io.bloomoperator.testing.servers.S3Server;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.Map;

/** BloomStores on a test's S3 server, and the operator's write credentials they name. */
public final class TestStores {

  private TestStores() {}

  /** Secret {@code name} in the operator's namespace (created if absent) with root's keys. */
  public static void writerCredentials(
      KubernetesClient client, String namespace, String name, S3Server server) {
    client
        .namespaces()
        .resource(
            new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
        .createOr(c -> c.update());
    client
        .secrets()
        .inNamespace(namespace)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withStringData(
                    Map.of(
                        ObjectStores.ACCESS_KEY_ID, server.accessKey(),
                        ObjectStores.SECRET_ACCESS_KEY, server.secretKey()))
                .build())
        .createOr(c -> c.update());
  }

  /**
   * Creates BloomStore {@code name} on {@code server}'s {@code bucket}, written with the
   * credentials Secret {@code secretName}, allowing {@code allowedNamespace}; {@code moreSpec} is
   * one more line of its spec (or empty).
   */
  public static void define(
      KubernetesClient client,
      String name,
      S3Server server,
      String bucket,
      String secretName,
      String allowedNamespace,
      String moreSpec) {
    client
        .resource(
            Serialization.unmarshal(
                """
                apiVersion: bloomoperator.io/v1alpha1
                kind: BloomStore
                metadata: {name: %s}
                spec:
                  endpoint: %s
                  allowInsecureEndpoint: true
                  bucket: %s
                  credentials: {secretName: %s}
                  allowedNamespaces: {names: [%s]}
                  %s
                """
                    .formatted(
                        name, server.endpoint(), bucket, secretName, allowedNamespace, moreSpec),
                BloomStore.class))
        .create();
  }
}
