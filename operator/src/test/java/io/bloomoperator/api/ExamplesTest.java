package io.bloomoperator.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every example under examples/ is accepted by the real API server as written, and no field of a
 * BloomFilter spec is silently dropped by the schema (a misspelt field would be).
 */
@RealKubernetes(crdDirs = "crds")
class ExamplesTest {

  static Stream<Path> examples() throws Exception {
    Path root = RealKubernetesExtension.repoRoot().resolve("examples");
    try (Stream<Path> files = Files.walk(root)) {
      return files
          .filter(f -> f.toString().endsWith(".yaml"))
          .filter(f -> !f.toString().contains("/target/"))
          // An example application's own resources (its application.yaml) are not manifests.
          .filter(f -> !f.toString().contains("/src/"))
          .sorted()
          .toList()
          .stream();
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("examples")
  void exampleIsAcceptedAsWritten(Path file, KubernetesClient client, TestNamespace ns)
      throws Exception {
    List<HasMetadata> items;
    try (InputStream in = Files.newInputStream(file)) {
      items = client.load(in).items();
    }
    assertThat(items).isNotEmpty();
    for (HasMetadata item : items) {
      HasMetadata created = client.resource(item).inNamespace(ns.name()).dryRun().create();
      if ("BloomFilter".equals(item.getKind())) {
        Object written = ((GenericKubernetesResource) item).getAdditionalProperties().get("spec");
        Object stored = ((GenericKubernetesResource) created).getAdditionalProperties().get("spec");
        assertThat(stored)
            .as("spec as stored, defaults aside")
            .usingRecursiveComparison()
            .ignoringFields("keyType", "format", "splitBlockSize")
            .isEqualTo(written);
      }
    }
  }
}
