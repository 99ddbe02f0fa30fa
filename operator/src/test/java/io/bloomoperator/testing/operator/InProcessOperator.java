package io.bloomoperator.testing.operator;

import io.bloomoperator.OperatorMain;
import io.bloomoperator.objectstore.StoreSettings;
import io.bloomoperator.readers.ReaderSettings;
import io.bloomoperator.runtime.RuntimeOptions;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RequestLog;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The operator running in the test JVM against the shared {@link KubeCluster}, started once for a
 * test class and stopped after it, with a client of its own (tests use their own clients, so what
 * the operator caches is not what a test reads). Register it on a static field of a {@link
 * io.bloomoperator.testing.RealKubernetes} test class, which installs the CRDs first:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final InProcessOperator OPERATOR = InProcessOperator.withSettings(
 *     OperatorSettings.builder().http(SETTINGS).build());
 * }</pre>
 *
 * <p>{@link #stop()} and {@link #start()} let a test do something while no operator runs (what a
 * crash leaves behind) and then bring it back with the same settings.
 */
public final class InProcessOperator implements BeforeAllCallback, AfterAllCallback {

  private final Supplier<OperatorSettings> settings;
  private Consumer<KubernetesClient> beforeStart = client -> {};
  private Consumer<KubernetesClient> afterStop = client -> {};
  private StoreSettings stores = StoreSettings.fromEnvironment(java.util.Map.of());
  private KubernetesClient client;
  private Operator operator;
  private ReaderSettings readers = ReaderSettings.defaults();
  private RequestLog requests;
  private MeterRegistry registry;

  private InProcessOperator(Supplier<OperatorSettings> settings) {
    this.settings = settings;
  }

  /** The operator as it runs with no environment set: {@link OperatorSettings#defaults()}. */
  public static InProcessOperator withDefaults() {
    return new InProcessOperator(OperatorSettings::defaults);
  }

  /** The operator with these settings. */
  public static InProcessOperator withSettings(OperatorSettings settings) {
    return new InProcessOperator(() -> settings);
  }

  /** Counts reader reports with {@code readers} instead of the defaults. */
  public InProcessOperator withReaderSettings(ReaderSettings readers) {
    this.readers = readers;
    return this;
  }

  /**
   * Runs {@code setup} with the operator's client once, before the operator first starts: for what
   * the operator checks at start (e.g. its signing key Secret). Runs after the setups given before
   * (a fixture's, e.g. {@link TestOperators#withStore}'s credentials).
   */
  public InProcessOperator beforeStart(Consumer<KubernetesClient> setup) {
    this.beforeStart = beforeStart.andThen(setup);
    return this;
  }

  /** Records every request of the operator's client into {@code requests}. */
  public InProcessOperator withRequestLog(RequestLog requests) {
    this.requests = requests;
    return this;
  }

  /** Sends the operator's metrics to {@code registry} (default: nowhere), for tests to read. */
  public InProcessOperator withRegistry(MeterRegistry registry) {
    this.registry = registry;
    return this;
  }

  /** The operator with these object-store settings (default: none of the environment). */
  public InProcessOperator withStores(StoreSettings stores) {
    this.stores = stores;
    return this;
  }

  /** Runs {@code teardown} with the operator's client once, after the operator last stopped. */
  public InProcessOperator afterStop(Consumer<KubernetesClient> teardown) {
    this.afterStop = teardown;
    return this;
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    client =
        requests == null
            ? KubeCluster.shared().newClient()
            : requests.newClient(KubeCluster.shared());
    beforeStart.accept(client);
    start();
  }

  @Override
  public void afterAll(ExtensionContext context) {
    try {
      stop();
      afterStop.accept(client);
    } finally {
      client.close();
      client = null;
    }
  }

  /** Starts the operator (again, after {@link #stop()}) with the settings it was created with. */
  public void start() {
    if (operator != null) {
      throw new IllegalStateException("the operator is already running");
    }
    operator =
        OperatorMain.start(
            client,
            settings.get(),
            stores,
            registry,
            new RuntimeOptions(0, false, null, "embedded", false),
            readers);
  }

  /** Stops the operator (the end of the test class does too: call it only to pause it). */
  public void stop() {
    if (operator != null) {
      Operator running = operator;
      operator = null;
      running.stop();
    }
  }

  /** The operator's own client (not closed by stopping the operator). */
  public KubernetesClient client() {
    if (client == null) {
      throw new IllegalStateException("the operator runs only within its test class");
    }
    return client;
  }
}
