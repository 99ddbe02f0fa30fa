package io.bloomoperator.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kustomize components deploy/lookup-sidecar/ and deploy/lookup-sidecar/file-mode/ used as
 * their comments tell users to (an application kustomization of its own with the settings
 * ConfigMap, the components, an {@code images} entry and, for file mode, the application's mount),
 * rendered by {@code kubectl kustomize} and applied to the real API server (dry run on the server,
 * which validates and defaults as for a real apply): the annotated Deployment gets the native
 * sidecar with the filter in its args, the downward-API identity reader reports need, a locked-down
 * security context and, in file mode, the shared volume; another Deployment is left alone, and a
 * kustomization without the settings fails instead of shipping a placeholder.
 */
@RealKubernetes
class LookupSidecarKustomizeTest {

  private static final String IMAGE = "registry.example.com/bloom-lookup-sidecar:0.1.0";
  private static final String FILES = "/var/run/bloom-lookup";

  @Test
  void addsTheSidecarToTheAnnotatedDeploymentOnly(
      KubernetesClient admin, TestNamespace ns, KubeCluster cluster, @TempDir Path work)
      throws IOException {
    Path dir = application(work, ns.name(), false, true);
    List<HasMetadata> rendered = InstallManifests.render(cluster, admin, dir).items();
    // The settings ConfigMap is local-config: never applied.
    assertThat(rendered)
        .extracting(o -> o.getKind() + " " + o.getMetadata().getName())
        .containsExactlyInAnyOrder("Deployment orders", "Deployment other");
    assertThat(deployment(rendered, "other").getSpec().getTemplate().getSpec().getInitContainers())
        .isEmpty();

    PodSpec applied = dryRunApply(admin, cluster, dir, deployment(rendered, "orders"));
    Container sidecar = assertSidecar(applied);
    assertThat(env(sidecar)).doesNotContainKeys("BLOOM_LOOKUP_FILE_MODE");
    assertThat(applied.getVolumes())
        .extracting(v -> v.getName())
        .containsExactlyInAnyOrder("bloom-lookup-tmp", "data");
  }

  @Test
  void fileModeSharesTheVolumeWithTheApplication(
      KubernetesClient admin, TestNamespace ns, KubeCluster cluster, @TempDir Path work)
      throws IOException {
    Path dir = application(work, ns.name(), true, true);
    List<HasMetadata> rendered = InstallManifests.render(cluster, admin, dir).items();
    PodSpec applied = dryRunApply(admin, cluster, dir, deployment(rendered, "orders"));
    Container sidecar = assertSidecar(applied);
    // The filter set by the first component survives the second.
    assertThat(sidecar.getArgs()).startsWith("--filter", "product-ids:String");
    assertThat(env(sidecar))
        .containsEntry("BLOOM_LOOKUP_FILE_MODE", "true")
        .containsEntry("BLOOM_LOOKUP_LOCAL_CACHE_DIR", FILES);
    assertThat(applied.getVolumes())
        .filteredOn(v -> v.getName().equals("bloom-lookup-files"))
        .singleElement()
        .satisfies(v -> assertThat(v.getEmptyDir()).isNotNull())
        .satisfies(v -> assertThat(v.getEmptyDir().getSizeLimit().toString()).isEqualTo("512Mi"));
    assertThat(mount(sidecar, "bloom-lookup-files"))
        .satisfies(m -> assertThat(m.getMountPath()).isEqualTo(FILES))
        .satisfies(m -> assertThat(m.getReadOnly()).isNotEqualTo(Boolean.TRUE));
    Container app = applied.getContainers().get(0);
    assertThat(mount(app, "bloom-lookup-files"))
        .satisfies(m -> assertThat(m.getMountPath()).isEqualTo(FILES))
        .satisfies(m -> assertThat(m.getReadOnly()).isTrue());
  }

  @Test
  void theObjectStoreComponentSetsTheStoreAndMountsItsSecretInTheSidecarOnly(
      KubernetesClient admin, TestNamespace ns, KubeCluster cluster, @TempDir Path work)
      throws IOException {
    Path dir = application(work, ns.name(), false, true);
    String store =
        "primary,endpoint=https://s3.example.com,bucket=bloom,"
            + "access-key-id-file=/var/run/bloom-s3/access-key-id,"
            + "secret-access-key-file=/var/run/bloom-s3/secret-access-key";
    Path settings = dir.resolve("lookup-sidecar-settings.yaml");
    Files.writeString(settings, Files.readString(settings) + "  objectStore: " + store + "\n");
    Path kustomization = dir.resolve("kustomization.yaml");
    Path shipped = RealKubernetesExtension.repoRoot().resolve("deploy/lookup-sidecar");
    String component = "  - " + dir.toRealPath().relativize(shipped.toRealPath());
    Files.writeString(
        kustomization,
        Files.readString(kustomization)
            .replace(component + "\n", component + "\n" + component + "/object-store\n"));
    List<HasMetadata> rendered = InstallManifests.render(cluster, admin, dir).items();
    PodSpec applied = dryRunApply(admin, cluster, dir, deployment(rendered, "orders"));
    Container sidecar = assertSidecar(applied);
    assertThat(env(sidecar)).containsEntry("BLOOM_LOOKUP_OBJECT_STORES", store);
    assertThat(mount(sidecar, "bloom-lookup-s3"))
        .satisfies(m -> assertThat(m.getMountPath()).isEqualTo("/var/run/bloom-s3"))
        .satisfies(m -> assertThat(m.getReadOnly()).isTrue());
    assertThat(applied.getVolumes())
        .filteredOn(v -> v.getName().equals("bloom-lookup-s3"))
        .singleElement()
        .satisfies(v -> assertThat(v.getSecret().getSecretName()).isEqualTo("bloom-lookup-s3"));
    // The credentials reach the sidecar alone, never the application's container.
    Container app = applied.getContainers().get(0);
    assertThat(app.getVolumeMounts()).noneMatch(m -> m.getName().equals("bloom-lookup-s3"));
  }

  @Test
  void withoutTheSettingsItDoesNotRender(
      KubernetesClient admin, TestNamespace ns, KubeCluster cluster, @TempDir Path work)
      throws IOException {
    Path dir = application(work, ns.name(), false, false);
    assertThatThrownBy(() -> InstallManifests.render(cluster, admin, dir))
        .hasMessageContaining("bloom-lookup-sidecar")
        .hasMessageContaining("data.filter");
  }

  /** The sidecar as the API server keeps it: what users rely on in every variant. */
  private static Container assertSidecar(PodSpec spec) {
    assertThat(spec.getInitContainers())
        .extracting(Container::getName)
        .containsExactly("bloom-lookup");
    Container sidecar = spec.getInitContainers().get(0);
    // A native sidecar: started before the application, stopped after it, gating readiness.
    assertThat(sidecar.getRestartPolicy()).isEqualTo("Always");
    assertThat(sidecar.getImage()).isEqualTo(IMAGE);
    // Loopback answers are the sidecar's default; only the health port is opened.
    assertThat(sidecar.getArgs())
        .containsExactly("--filter", "product-ids:String", "--health-port", "8472");
    Map<String, EnvVar> env =
        sidecar.getEnv().stream().collect(Collectors.toMap(EnvVar::getName, e -> e));
    assertThat(env.get("POD_NAME").getValueFrom().getFieldRef().getFieldPath())
        .isEqualTo("metadata.name");
    assertThat(env.get("POD_UID").getValueFrom().getFieldRef().getFieldPath())
        .isEqualTo("metadata.uid");
    assertThat(env.get("POD_NAMESPACE").getValueFrom().getFieldRef().getFieldPath())
        .isEqualTo("metadata.namespace");
    SecurityContext security = sidecar.getSecurityContext();
    assertThat(security.getRunAsNonRoot()).isTrue();
    assertThat(security.getReadOnlyRootFilesystem()).isTrue();
    assertThat(security.getAllowPrivilegeEscalation()).isFalse();
    assertThat(security.getCapabilities().getDrop()).containsExactly("ALL");
    assertThat(security.getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
    assertThat(sidecar.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
    assertThat(sidecar.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/livez");
    assertThat(sidecar.getResources().getLimits()).containsKey("memory");
    // The root file system is read-only: the JVM's /tmp is a volume of its own.
    assertThat(mount(sidecar, "bloom-lookup-tmp").getMountPath()).isEqualTo("/tmp");
    return sidecar;
  }

  /**
   * Applies the kustomization as users do ({@code kubectl apply -k}, on the server without
   * persisting) and returns the pod template of {@code deployment} as the API server validated and
   * defaulted it.
   */
  private static PodSpec dryRunApply(
      KubernetesClient admin, KubeCluster cluster, Path dir, Deployment deployment) {
    cluster.kubectl("apply", "-k", dir.toString(), "--server-side", "--dry-run=server");
    Deployment applied =
        admin.apps().deployments().resource(deployment).dryRun().forceConflicts().serverSideApply();
    assertThat(applied.getMetadata().getUid()).isNotNull(); // the server's answer, not the input
    return applied.getSpec().getTemplate().getSpec();
  }

  /**
   * An application's kustomization as deploy/lookup-sidecar/kustomization.yaml describes it: its
   * Deployment (annotated) beside one that is not, the settings ConfigMap, the component(s), the
   * image, and for file mode the application container's read-only mount.
   */
  private static Path application(Path work, String namespace, boolean fileMode, boolean settings)
      throws IOException {
    Path dir = Files.createDirectory(work.resolve("app"));
    Path shipped = RealKubernetesExtension.repoRoot().resolve("deploy/lookup-sidecar");
    // kustomize takes a component by relative path only.
    String component = dir.toRealPath().relativize(shipped.toRealPath()).toString();
    Files.writeString(
        dir.resolve("deployment.yaml"),
        """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: orders
          annotations: {bloomoperator.io/lookup-sidecar: "true"}
        spec:
          selector: {matchLabels: {app: orders}}
          template:
            metadata: {labels: {app: orders}}
            spec:
              containers:
                - name: app
                  image: python:3.12-slim
                  volumeMounts: [{name: data, mountPath: /data}]
              volumes: [{name: data, emptyDir: {}}]
        ---
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: other
        spec:
          selector: {matchLabels: {app: other}}
          template:
            metadata: {labels: {app: other}}
            spec:
              containers: [{name: app, image: busybox}]
        """);
    Files.writeString(
        dir.resolve("lookup-sidecar-settings.yaml"),
        """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: bloom-lookup-sidecar
          annotations: {config.kubernetes.io/local-config: "true"}
        data:
          filter: product-ids:String
        """);
    StringBuilder kustomization =
        new StringBuilder(
            """
            apiVersion: kustomize.config.k8s.io/v1beta1
            kind: Kustomization
            namespace: %s
            resources:
              - deployment.yaml
            %scomponents:
              - %s
            %simages:
              - {name: bloom-lookup-sidecar, newName: registry.example.com/bloom-lookup-sidecar, newTag: "0.1.0"}
            """
                .formatted(
                    namespace,
                    settings ? "  - lookup-sidecar-settings.yaml\n" : "",
                    component,
                    fileMode ? "  - " + component + "/file-mode\n" : ""));
    if (fileMode) {
      kustomization.append(
          """
          patches:
            - target: {kind: Deployment, name: orders}
              patch: |-
                - {op: add, path: /spec/template/spec/containers/0/volumeMounts/-,
                   value: {name: bloom-lookup-files, mountPath: /var/run/bloom-lookup, readOnly: true}}
          """);
    }
    Files.writeString(dir.resolve("kustomization.yaml"), kustomization.toString());
    return dir;
  }

  private static Deployment deployment(List<HasMetadata> items, String name) {
    return items.stream()
        .filter(Deployment.class::isInstance)
        .map(Deployment.class::cast)
        .filter(d -> d.getMetadata().getName().equals(name))
        .findFirst()
        .orElseThrow();
  }

  private static Map<String, String> env(Container container) {
    return container.getEnv().stream()
        .filter(e -> e.getValue() != null)
        .collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue));
  }

  private static VolumeMount mount(Container container, String volume) {
    return container.getVolumeMounts().stream()
        .filter(m -> m.getName().equals(volume))
        .findFirst()
        .orElseThrow(() -> new AssertionError(container.getName() + " does not mount " + volume));
  }
}
