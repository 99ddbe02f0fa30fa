package io.bloomoperator.examples.productapi;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.testing.RealKubernetesExtension;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

/** The example's manifests as the tests use them: read from the files users apply. */
final class ExampleManifests {

  static final Path EXAMPLE =
      RealKubernetesExtension.repoRoot().resolve("examples/spring-boot-app");

  private ExampleManifests() {}

  /** The objects of one of the example's YAML files. */
  static List<HasMetadata> load(KubernetesClient client, String file) throws IOException {
    try (InputStream in = Files.newInputStream(EXAMPLE.resolve(file))) {
      return client.load(in).items();
    }
  }

  /** The one object of {@code type} among {@code items}. */
  static <T extends HasMetadata> T only(List<HasMetadata> items, Class<T> type) {
    List<T> matching = items.stream().filter(type::isInstance).map(type::cast).toList();
    assertThat(matching).as(type.getSimpleName()).hasSize(1);
    return matching.get(0);
  }

  /** bloomfilter.yaml as written, its ID list replaced by the IDs 1..{@code catalogue}. */
  static void applyFilter(KubernetesClient admin, String namespace, int catalogue)
      throws IOException {
    for (HasMetadata item : load(admin, "bloomfilter.yaml")) {
      HasMetadata applied =
          item instanceof ConfigMap list
              ? new ConfigMapBuilder(list)
                  .withData(
                      Map.of(
                          "ids.txt",
                          LongStream.rangeClosed(1, catalogue)
                              .mapToObj(String::valueOf)
                              .collect(Collectors.joining("\n", "", "\n"))))
                  .build()
              : item;
      admin.resource(applied).inNamespace(namespace).create();
    }
  }
}
