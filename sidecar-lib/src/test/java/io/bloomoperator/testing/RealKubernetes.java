package io.bloomoperator.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs a test class against the shared real API server: each test gets its own namespace and a
 * {@link io.fabric8.kubernetes.client.KubernetesClient} (and a {@link TestNamespace}) as
 * parameters.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(RealKubernetesExtension.class)
@Tag("real-kubernetes")
public @interface RealKubernetes {

  /** Directories (relative to the repository root) whose CRD YAML files are installed first. */
  String[] crdDirs() default {};

  /**
   * Whether kube-controller-manager (garbage collector, namespace controller, ClusterRole
   * aggregation) must run.
   */
  boolean controllerManager() default false;
}
