package io.bloomoperator;

import io.bloomoperator.metrics.BuildMetrics;
import io.bloomoperator.objectstore.BloomStoreReconciler;
import io.bloomoperator.objectstore.ObjectStores;
import io.bloomoperator.objectstore.StoreSettings;
import io.bloomoperator.publish.WriteFence;
import io.bloomoperator.readers.ReaderSettings;
import io.bloomoperator.reconcile.BloomFilterReconciler;
import io.bloomoperator.runtime.CommonPoolSizing;
import io.bloomoperator.runtime.HealthServer;
import io.bloomoperator.runtime.LeaseWriteFence;
import io.bloomoperator.runtime.RuntimeOptions;
import io.bloomoperator.settings.OperatorSettings;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.javaoperatorsdk.operator.monitoring.micrometer.MicrometerMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the operator against the cluster of the current kubeconfig or service account, with health
 * and metrics endpoints and, inside a pod, leader election on a Lease.
 */
public final class OperatorMain {

  /** How long a stopping operator waits for reconciles under way (see {@link #start}). */
  static final Duration RECONCILE_TERMINATION_TIMEOUT = Duration.ofSeconds(20);

  // Looked up when needed, not in a static field: the CLI branch of main must set up logging
  // (stderr, no logback status dump on stdout) before logback starts.
  private static Logger log() {
    return LoggerFactory.getLogger(OperatorMain.class);
  }

  private OperatorMain() {}

  public static void main(String[] args) throws Exception {
    // First, before anything starts the common ForkJoinPool: on <= 2 CPUs its default size makes
    // every HTTP request start a thread (see CommonPoolSizing).
    CommonPoolSizing.apply();
    if (io.bloomoperator.cli.BloomCli.isCliInvocation(args)) {
      // build / inspect / query / help: the offline CLI; no arguments runs the operator.
      System.exit(io.bloomoperator.cli.BloomCli.run(args));
    }
    RuntimeOptions options = RuntimeOptions.fromEnvironment(System.getenv());
    OperatorSettings settings = OperatorSettings.fromEnvironment(System.getenv());
    KubernetesClient client = new KubernetesClientBuilder().build();
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    AtomicBoolean stopped = new AtomicBoolean();
    Operator operator = start(client, settings, registry, options);
    HealthServer health = HealthServer.start(options.httpPort(), operator, registry, stopped::get);
    log()
        .info(
            "bloom-operator started: endpoints on :{}, leader election {}",
            health.port(),
            options.leaderElection()
                ? "on (Lease "
                    + options.leaseNamespace()
                    + "/"
                    + RuntimeOptions.LEASE_NAME
                    + ", identity "
                    + options.identity()
                    + ")"
                : "off");
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  stopped.set(true);
                  operator.stop();
                  health.close();
                  client.close();
                },
                "bloom-operator-stop"));
  }

  /** Creates, registers and starts the operator with default metrics and no leader election. */
  public static Operator start(KubernetesClient client, OperatorSettings settings) {
    return start(client, settings, null, new RuntimeOptions(0, false, null, "embedded", false));
  }

  /** As {@link #start(KubernetesClient, OperatorSettings)}, with how object stores are used. */
  public static Operator start(
      KubernetesClient client, OperatorSettings settings, StoreSettings stores) {
    return start(
        client,
        settings,
        stores,
        null,
        new RuntimeOptions(0, false, null, "embedded", false),
        ReaderSettings.fromEnvironment(System.getenv()));
  }

  /**
   * Creates, registers and starts the operator with the reader settings of the environment ({@link
   * ReaderSettings#fromEnvironment}); the caller stops it.
   *
   * @param registry where java-operator-sdk's and the build metrics go (null: nowhere)
   */
  public static Operator start(
      KubernetesClient client,
      OperatorSettings settings,
      MeterRegistry registry,
      RuntimeOptions options) {
    return start(
        client,
        settings,
        StoreSettings.fromEnvironment(System.getenv()),
        registry,
        options,
        ReaderSettings.fromEnvironment(System.getenv()));
  }

  /**
   * Creates, registers and starts the operator; the caller stops it.
   *
   * @param storeSettings how object stores are used
   * @param registry where java-operator-sdk's and the build metrics go (null: nowhere)
   * @param readers how reader reports are counted into status.readers
   */
  public static Operator start(
      KubernetesClient client,
      OperatorSettings settings,
      StoreSettings storeSettings,
      MeterRegistry registry,
      RuntimeOptions options,
      ReaderSettings readers) {
    if (settings.publishing().signingKey() != null) {
      // A key that cannot be used is a deployment error: say so now rather than at each publish.
      try {
        log()
            .info(
                "manifests are signed with key {} from Secret {}/{}",
                settings.publishing().signingKey().load(client).keyId(),
                settings.publishing().signingKey().namespace(),
                settings.publishing().signingKey().name());
      } catch (io.bloomoperator.publish.PublishException e) {
        throw new IllegalStateException(e.getMessage(), e);
      }
    }
    BuildMetrics metrics =
        registry == null ? BuildMetrics.discarding() : new BuildMetrics(registry);
    Operator operator =
        new Operator(
            o -> {
              // The reconciler writes the status itself (reconcile.StatusWriter, a JSON merge
              // patch).
              o.withKubernetesClient(client).withCloseClientOnStop(false);
              // java-operator-sdk's default is not to wait: stop() would interrupt a publish and
              // return while its thread still writes, and a janitor still running could delete
              // what another writer has created meanwhile. Let an in-flight reconcile finish,
              // inside Kubernetes' default 30 s termination grace period.
              o.withReconciliationTerminationTimeout(RECONCILE_TERMINATION_TIMEOUT);
              if (registry != null) {
                o.withMetrics(
                    new io.bloomoperator.runtime.OperatorMetrics(
                        MicrometerMetrics.withoutPerResourceMetrics(registry), metrics));
              }
              if (options.leaderElection()) {
                // Only the Lease holder reconciles; others keep their caches warm and take over
                // within
                // the lease duration when the holder goes away.
                o.withLeaderElectionConfiguration(
                    new LeaderElectionConfiguration(
                        RuntimeOptions.LEASE_NAME,
                        options.leaseNamespace(),
                        Duration.ofSeconds(15),
                        Duration.ofSeconds(10),
                        Duration.ofSeconds(2),
                        options.identity(),
                        null,
                        options.exitOnLostLease()));
              }
            });
    ObjectStores stores = new ObjectStores(storeSettings, settings.sources().http().egress());
    BloomFilterReconciler reconciler =
        new BloomFilterReconciler(
            settings,
            Clock.systemUTC(),
            metrics,
            options.identity(),
            options.leaderElection()
                ? new LeaseWriteFence(
                    client,
                    options.leaseNamespace(),
                    RuntimeOptions.LEASE_NAME,
                    options.identity(),
                    Clock.systemUTC())
                : WriteFence.NONE,
            stores);
    reconciler.withReaderSettings(readers);
    if (options.namespaces().isEmpty()) {
      operator.register(reconciler);
      // BloomStores are cluster-scoped: only the cluster-wide install may watch them (the
      // namespaced install grants nothing outside its namespaces, and has no object stores). An
      // install without the BloomStore CRD or its RBAC runs without store status rather than not
      // at all.
      if (BloomStoreReconciler.canWatch(client)) {
        operator.register(new BloomStoreReconciler(stores, Clock.systemUTC()));
      } else {
        log().warn("BloomStores cannot be listed (CRD or RBAC missing): their status is not kept");
      }
    } else {
      operator.register(reconciler, c -> c.settingNamespaces(options.namespaces()));
    }
    try {
      operator.start();
    } catch (RuntimeException e) {
      // A failed start (e.g. an informer refused by RBAC) may already have started others;
      // stop them so nothing keeps reconciling behind the caller's back.
      try {
        operator.stop();
      } catch (RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
    return operator;
  }
}
