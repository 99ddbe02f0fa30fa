package io.bloomoperator.testing;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

/** JUnit 5 side of {@link RealKubernetes}: shared cluster, namespace per test, injection. */
public final class RealKubernetesExtension
    implements BeforeAllCallback, BeforeEachCallback, AfterEachCallback, ParameterResolver {

  private static final java.util.concurrent.atomic.AtomicInteger COUNTER =
      new java.util.concurrent.atomic.AtomicInteger();
  private static final ExtensionContext.Namespace STORE =
      ExtensionContext.Namespace.create(RealKubernetesExtension.class);

  @Override
  public void beforeAll(ExtensionContext context) {
    KubeCluster cluster = KubeCluster.shared();
    RealKubernetes options =
        AnnotationSupport.findAnnotation(context.getRequiredTestClass(), RealKubernetes.class)
            .orElseThrow();
    for (String dir : options.crdDirs()) {
      cluster.installCrds(repoRoot().resolve(dir));
    }
    if (options.controllerManager()) {
      cluster.startControllerManager();
    }
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    KubernetesClient client = KubeCluster.shared().newClient();
    String name = namespaceName(context.getRequiredTestMethod().getName());
    client
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build())
        .create();
    context.getStore(STORE).put(KubernetesClient.class, client);
    context.getStore(STORE).put(TestNamespace.class, new TestNamespace(name));
  }

  @Override
  public void afterEach(ExtensionContext context) {
    KubernetesClient client =
        context.getStore(STORE).remove(KubernetesClient.class, KubernetesClient.class);
    TestNamespace ns = context.getStore(STORE).remove(TestNamespace.class, TestNamespace.class);
    if (client != null) {
      try {
        if (ns != null) {
          client.namespaces().withName(ns.name()).delete();
        }
      } finally {
        client.close();
      }
    }
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    Class<?> type = parameter.getParameter().getType();
    return type == KubernetesClient.class
        || type == TestNamespace.class
        || type == KubeCluster.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    Class<?> type = parameter.getParameter().getType();
    if (type == KubeCluster.class) {
      return KubeCluster.shared();
    }
    return context.getStore(STORE).get(type, type);
  }

  /** The repository root, passed by Maven's surefire configuration (bloom.repoRoot). */
  public static Path repoRoot() {
    String root = System.getProperty("bloom.repoRoot");
    return root != null ? Path.of(root) : Path.of("..").toAbsolutePath().normalize();
  }

  private static String namespaceName(String testName) {
    String base = testName.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-");
    if (base.length() > 36) {
      base = base.substring(0, 36);
    }
    base = base.replaceAll("^-+|-+$", "");
    // Unique per JVM (counter) and across JVMs sharing a cluster (random part): a deleted
    // namespace lingers while the namespace controller empties it.
    return "t-"
        + base
        + "-"
        + COUNTER.incrementAndGet()
        + "-"
        + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x10000));
  }
}
