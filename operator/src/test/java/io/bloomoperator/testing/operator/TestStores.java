package io.bloomoperator.testing.operator;

import io.bloomoperator.api.BloomStore;
import io.bloomoperator.objectstore.ObjectStores;
import io.bloomoperator.testing.servers.S3Server;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * BloomStores on a test's S3 server, the operator's write credentials they name and the filters
 * that publish to them: the one definition of a store's YAML the tests share.
 *
 * <pre>{@code
 * TestStores.store(name).on(SERVER, bucket).allowing(ns.name()).create(client);
 * }</pre>
 */
public final class TestStores {

  /** The Secret, in the operator's namespace, holding the stores' write credentials. */
  public static final String CREDENTIALS = "s3-writer";

  private TestStores() {}

  /**
   * Secret {@link #CREDENTIALS} in the operator's {@code namespace} (both created if absent) with
   * {@code server}'s root keys.
   */
  public static void writerCredentials(KubernetesClient client, String namespace, S3Server server) {
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
                .withName(CREDENTIALS)
                .endMetadata()
                .withStringData(
                    Map.of(
                        ObjectStores.ACCESS_KEY_ID, server.accessKey(),
                        ObjectStores.SECRET_ACCESS_KEY, server.secretKey()))
                .build())
        .createOr(c -> c.update());
  }

  /**
   * BloomStore {@code name}, written with {@link #CREDENTIALS}, allowing no namespace yet: say
   * where ({@link Definition#on} or {@link Definition#at}) and for whom ({@link
   * Definition#allowing}), then {@link Definition#create}.
   */
  public static Definition store(String name) {
    return new Definition(name, null, null, null, "");
  }

  /**
   * BloomFilter {@code name} publishing to store {@code store}: the inline {@code keys}, 1 KiB
   * chunks (a version of a few thousand keys has several), previous versions kept 1 s.
   */
  public static String filter(String name, String store, List<String> keys) {
    return """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: %s}
        spec:
          falsePositiveRate: 0.01
          snapshot: {store: %s, chunkSizeBytes: 1024, retainPreviousFor: 1s}
          source:
            inline: [%s]
        """
        .formatted(name, store, String.join(", ", keys));
  }

  /** {@code count} keys: {@code tag-0}, {@code tag-1}, ... */
  public static List<String> keys(int count, String tag) {
    return IntStream.range(0, count).mapToObj(i -> tag + "-" + i).toList();
  }

  /**
   * A BloomStore to create.
   *
   * @param endpoint the store's URL ({@code allowInsecureEndpoint} is set: plain HTTP is fine)
   * @param allowedNamespace the one namespace whose filters may use it
   * @param moreSpec one more line of its spec (e.g. {@code prefix: p}), or empty
   */
  public record Definition(
      String name, String endpoint, String bucket, String allowedNamespace, String moreSpec) {

    /** On {@code server}'s {@code bucket}. */
    public Definition on(S3Server server, String bucket) {
      return at(server.endpoint().toString(), bucket);
    }

    /** On {@code bucket} at {@code endpoint}, which need not be a server of the test. */
    public Definition at(String endpoint, String bucket) {
      return new Definition(name, endpoint, bucket, allowedNamespace, moreSpec);
    }

    /** Usable by the filters of {@code namespace}. */
    public Definition allowing(String namespace) {
      return new Definition(name, endpoint, bucket, namespace, moreSpec);
    }

    /** With {@code line} (e.g. {@code prefix: p}) as one more line of its spec. */
    public Definition with(String line) {
      return new Definition(name, endpoint, bucket, allowedNamespace, line);
    }

    /** The BloomStore as its author would write it. */
    public String yaml() {
      return """
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
          .formatted(name, endpoint, bucket, CREDENTIALS, allowedNamespace, moreSpec);
    }

    /** Creates it (cluster-scoped); fails if a store of that name exists. */
    public BloomStore create(KubernetesClient client) {
      return client.resource(Serialization.unmarshal(yaml(), BloomStore.class)).create();
    }
  }
}
