package io.bloomoperator.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.reconcile.SnapshotFixtures;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.operator.TestOperators;
import io.bloomoperator.testing.operator.TestStores;
import io.bloomoperator.testing.servers.S3Server;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CLI on a filter whose chunks are in an object store (versitygw): inspect, query and export
 * read them from the store given on the command line, never from one the manifest could name.
 */
@RealKubernetes(crdDirs = "crds")
class BloomCliStoreTest {

  private static final String OPERATOR_NAMESPACE = "bloom-clistore-operator";
  private static final S3Server SERVER = S3Server.start();

  @RegisterExtension
  @Order(1)
  static final InProcessOperator OPERATOR =
      TestOperators.withStore(SERVER, OPERATOR_NAMESPACE).build();

  @AfterAll
  static void stopServer() {
    SERVER.close();
  }

  @Test
  void inspectQueryAndExportReadAStoreBackedFilterFromTheStoreGiven(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster, @TempDir Path tmp)
      throws Exception {
    String store = "cli-" + System.nanoTime() % 100000;
    String bucket = SERVER.createBucket("bloom");
    TestStores.store(store).on(SERVER, bucket).allowing(ns.name()).create(client);
    List<String> keys = IntStream.range(0, 2000).mapToObj(i -> "id-" + i).toList();
    SnapshotFixtures.apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: ids}
        spec:
          falsePositiveRate: 0.01
          snapshot: {store: %s, chunkSizeBytes: 1024}
          source:
            inline: [%s]
        """
            .formatted(store, String.join(", ", keys)));
    SnapshotFixtures.awaitStatus(
        client, ns.name(), "ids", f -> SnapshotFixtures.ready(f, "True", Reasons.PUBLISHED));
    String kubeconfig = cluster.kubeconfig().toString();
    String[] from =
        concat(
            new String[] {"-n", ns.name(), "--name", "ids", "--kubeconfig", kubeconfig},
            storeOptions(bucket, tmp));

    // Without the store's coordinates: a clear refusal, nothing fetched from elsewhere.
    Cli.Run blind =
        Cli.run("inspect", "-n", ns.name(), "--name", "ids", "--kubeconfig", kubeconfig);
    assertThat(blind.exit()).as(blind.toString()).isNotZero();
    assertThat(blind.err()).contains("object store '" + store + "'", "--store-endpoint");

    Cli.Run inspect = Cli.run(concat(new String[] {"inspect"}, from));
    assertThat(inspect.exit()).as(inspect.toString()).isZero();
    assertThat(inspect.out()).contains("object store " + store);

    Cli.Run query = Cli.run(concat(new String[] {"query"}, concat(from, new String[] {"id-7"})));
    assertThat(query.exit()).as(query.toString()).isZero();
    assertThat(query.out()).contains("id-7\tmaybe-present");

    Path out = tmp.resolve("ids.bin");
    Cli.Run export = Cli.run(concat(new String[] {"export"}, concat(from, "-o", out.toString())));
    assertThat(export.exit()).as(export.toString()).isZero();
    assertThat(Files.size(out)).isGreaterThan(2000);

    // Wrong credentials: refused, with the store named.
    Path wrong = Files.writeString(tmp.resolve("wrong"), "not-the-secret");
    String[] bad = from.clone();
    bad[bad.length - 1] = wrong.toString();
    Cli.Run refused = Cli.run(concat(new String[] {"inspect"}, bad));
    assertThat(refused.exit()).as(refused.toString()).isNotZero();
  }

  @Test
  void buildWritesTheChunksToAStoreAndOnlyTheManifestToTheDirectory(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster, @TempDir Path tmp)
      throws Exception {
    String bucket = SERVER.createBucket("bloom");
    Path keys =
        Files.write(
            tmp.resolve("keys.txt"), IntStream.range(0, 3000).mapToObj(i -> "sku-" + i).toList());
    String[] store = storeOptions(bucket, tmp);
    Path dir = tmp.resolve("out");
    Cli.Run build =
        Cli.run(
            concat(
                new String[] {
                  "build",
                  "--name",
                  "offline",
                  "--fpp",
                  "0.01",
                  "-n",
                  ns.name(),
                  "-i",
                  keys.toString(),
                  "-o",
                  dir.toString(),
                  "--store",
                  "offline-store"
                },
                store));
    assertThat(build.exit()).as(build.toString()).isZero();
    try (var files = Files.list(dir)) {
      assertThat(files.toList()).as("only the manifest ConfigMap").hasSize(1);
    }
    try (var s3 = SERVER.client()) {
      assertThat(
              s3.listObjectsV2(b -> b.bucket(bucket).prefix("bloom/" + ns.name() + "/offline/"))
                  .contents())
          .isNotEmpty();
    }

    try (var files = Files.list(dir)) {
      Path manifest = files.findFirst().orElseThrow();
      try (var in = Files.newInputStream(manifest)) {
        client.load(in).inNamespace(ns.name()).create();
      }
    }
    Cli.Run inspect =
        Cli.run(
            concat(
                new String[] {
                  "inspect",
                  "-n",
                  ns.name(),
                  "--name",
                  "offline",
                  "--kubeconfig",
                  cluster.kubeconfig().toString()
                },
                store));
    assertThat(inspect.exit()).as(inspect.toString()).isZero();
    assertThat(inspect.out()).contains("object store offline-store", "keyCount:         3000");
  }

  /** The --store-* options of {@link #SERVER}'s {@code bucket}, with root's keys in files. */
  private static String[] storeOptions(String bucket, Path tmp) throws java.io.IOException {
    Path id = Files.writeString(tmp.resolve("id"), SERVER.accessKey());
    Path secret = Files.writeString(tmp.resolve("secret"), SERVER.secretKey());
    return new String[] {
      "--store-endpoint",
      SERVER.endpoint().toString(),
      "--store-bucket",
      bucket,
      "--store-access-key-file",
      id.toString(),
      "--store-secret-key-file",
      secret.toString()
    };
  }

  private static String[] concat(String[] a, String... b) {
    String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, all, a.length, b.length);
    return all;
  }
}
