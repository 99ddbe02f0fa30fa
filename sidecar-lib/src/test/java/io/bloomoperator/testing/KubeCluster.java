package io.bloomoperator.testing;

import io.fabric8.kubeapitest.KubeAPIServer;
import io.fabric8.kubeapitest.KubeAPIServerConfigBuilder;
import io.fabric8.kubeapitest.binary.OSInfo;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One real Kubernetes API server (kube-apiserver + etcd via fabric8 kube-api-test) shared by every
 * test of a JVM, because starting one costs seconds. Optionally also a kube-controller-manager
 * running only the controllers that tests rely on (ownerReference garbage collection, namespace
 * deletion, ClusterRole aggregation into the built-in view/edit/admin roles), which kube-api-test
 * does not start.
 *
 * <p>Binaries come from {@code hack/build-kube-binaries.sh} (offline) or, when {@code
 * BLOOM_KUBE_DOWNLOAD=true}, from kube-api-test's own download. {@code BLOOM_TEST_KUBECONFIG}
 * points the tests at an existing cluster instead.
 */
public final class KubeCluster implements AutoCloseable {

  private static final String HACK_SCRIPT = "hack/build-kube-binaries.sh";
  private static final String VERSIONS_FILE = "hack/kube-versions.env";
  private static KubeCluster shared;

  private final KubeAPIServer apiServer;
  private final Path kubeconfig;
  private final Path binaryDir;
  private Process controllerManager;
  private final List<String> installedCrdDirs = new ArrayList<>();

  private KubeCluster(KubeAPIServer apiServer, Path kubeconfig, Path binaryDir) {
    this.apiServer = apiServer;
    this.kubeconfig = kubeconfig;
    this.binaryDir = binaryDir;
  }

  /** The JVM-wide cluster, started on first use and stopped when the JVM's tests are done. */
  public static synchronized KubeCluster shared() {
    if (shared == null) {
      shared = start();
      Runtime.getRuntime().addShutdownHook(new Thread(shared::close, "kube-cluster-stop"));
    }
    return shared;
  }

  private static KubeCluster start() {
    String external = System.getenv("BLOOM_TEST_KUBECONFIG");
    if (external != null && !external.isBlank()) {
      return new KubeCluster(null, Path.of(external), null);
    }
    String testDir =
        firstNonBlank(
            System.getenv("KUBE_API_TEST_DIR"),
            new File(System.getProperty("user.home"), KubeAPIServerConfigBuilder.DIRECTORY_NAME)
                .getPath());
    String version = kubeVersion();
    boolean download = "true".equalsIgnoreCase(System.getenv("BLOOM_KUBE_DOWNLOAD"));
    Path binaryDir = Path.of(testDir, "k8s", version + "-" + osArch());
    if (!download && !Files.isExecutable(binaryDir.resolve("kube-apiserver"))) {
      throw new IllegalStateException(
          "Kubernetes test binaries not found in "
              + binaryDir
              + ". Build them with `bash "
              + HACK_SCRIPT
              + "` (needs Go and the Go module proxy),"
              + " set BLOOM_KUBE_DOWNLOAD=true to let kube-api-test download them,"
              + " or set BLOOM_TEST_KUBECONFIG to use an existing cluster.");
    }
    // Offline mode is set through the builder: as an environment variable fabric8 7.5.2 casts the
    // string to Boolean and fails.
    var config =
        KubeAPIServerConfigBuilder.anAPIServerConfig()
            .withTestDir(testDir)
            .withApiServerVersion(version)
            .withOfflineMode(!download)
            .withStartupTimeout(startupTimeoutMillis())
            .build();
    KubeAPIServer server = new KubeAPIServer(config);
    long started = System.nanoTime();
    try {
      server.start();
    } catch (RuntimeException e) {
      server.stop(); // kube-api-test leaves etcd running when the API server fails to start
      throw e;
    }
    try {
      Path kubeconfig = Files.createTempFile("bloom-test-kubeconfig", ".yaml");
      kubeconfig.toFile().deleteOnExit();
      Files.writeString(kubeconfig, server.getKubeConfigYaml(), StandardCharsets.UTF_8);
      System.out.printf(
          "real kube-apiserver %s started in %d ms (binaries %s)%n",
          version, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), binaryDir);
      return new KubeCluster(server, kubeconfig, binaryDir);
    } catch (IOException e) {
      server.stop();
      throw new UncheckedIOException(e);
    }
  }

  /**
   * kube-api-test 7.5.2 computes its start-up deadline as a LocalTime, which wraps at midnight: a
   * start within the timeout before 00:00 fails at once ("did not start properly"). Keep the
   * deadline before midnight, or wait for midnight to pass when too little time is left.
   */
  static int startupTimeoutMillis() {
    long wanted = 120_000;
    long untilMidnight =
        java.time.Duration.between(java.time.LocalTime.now(), java.time.LocalTime.MAX).toMillis();
    if (untilMidnight > wanted + 1_000) {
      return (int) wanted;
    }
    if (untilMidnight > 31_000) {
      return (int) (untilMidnight - 1_000);
    }
    try {
      Thread.sleep(untilMidnight + 2_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return (int) wanted;
  }

  /** A new client for the cluster; the caller closes it. */
  public KubernetesClient newClient() {
    return new KubernetesClientBuilder().withConfig(clientConfig()).build();
  }

  /** Client configuration for the cluster, e.g. to start an operator against it. */
  public Config clientConfig() {
    try {
      return Config.fromKubeconfig(Files.readString(kubeconfig));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Path of a kubeconfig file with cluster-admin rights on the cluster. */
  public Path kubeconfig() {
    return kubeconfig;
  }

  /** The kubectl next to the test binaries, or the one on the PATH for an external cluster. */
  public String kubectl() {
    return binaryDir == null ? "kubectl" : binaryDir.resolve("kubectl").toString();
  }

  /** Creates or replaces every CRD in a directory and waits until the API server serves them. */
  public synchronized void installCrds(Path dir) {
    if (installedCrdDirs.contains(dir.toString())) {
      return;
    }
    try (KubernetesClient client = newClient();
        Stream<Path> files = Files.list(dir)) {
      for (Path file :
          files
              .filter(
                  f ->
                      f.getFileName().toString().endsWith(".yml")
                          || f.getFileName().toString().endsWith(".yaml"))
              .sorted()
              .toList()) {
        List<CustomResourceDefinition> crds;
        try (InputStream in = Files.newInputStream(file)) {
          // Other YAML beside the CRDs (e.g. a kustomization.yaml) is not for the API server.
          crds =
              client.load(in).items().stream()
                  .filter(CustomResourceDefinition.class::isInstance)
                  .map(CustomResourceDefinition.class::cast)
                  .toList();
        }
        for (CustomResourceDefinition crd : crds) {
          client.resource(crd).forceConflicts().serverSideApply();
          client
              .apiextensions()
              .v1()
              .customResourceDefinitions()
              .withName(crd.getMetadata().getName())
              .waitUntilCondition(KubeCluster::established, 30, TimeUnit.SECONDS);
        }
      }
      installedCrdDirs.add(dir.toString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Starts kube-controller-manager with the garbage collector (ownerReference cascading deletes),
   * the namespace controller and the ClusterRole aggregation controller (labelled ClusterRoles
   * folded into view/edit/admin), once per JVM.
   */
  public synchronized void startControllerManager() {
    if (controllerManager != null || binaryDir == null) {
      return; // an external cluster has its own controllers
    }
    Path binary = binaryDir.resolve("kube-controller-manager");
    if (!Files.isExecutable(binary)) {
      throw new IllegalStateException(
          "kube-controller-manager not found at "
              + binary
              + ". Build it with `bash "
              + HACK_SCRIPT
              + "`.");
    }
    try {
      Path log = Files.createTempFile("kube-controller-manager", ".log");
      controllerManager =
          new ProcessBuilder(
                  binary.toString(),
                  "--kubeconfig",
                  kubeconfig.toString(),
                  "--controllers",
                  "garbagecollector,namespace,clusterrole-aggregation",
                  "--leader-elect=false",
                  "--secure-port",
                  String.valueOf(freePort()),
                  "--bind-address",
                  "127.0.0.1",
                  "--use-service-account-credentials=false")
              .redirectErrorStream(true)
              .redirectOutput(log.toFile())
              .start();
      // The garbage collector needs a few seconds of discovery before it acts; tests wait on
      // the outcome they expect, so only an early exit is checked here.
      if (controllerManager.waitFor(2, TimeUnit.SECONDS)) {
        throw new IllegalStateException(
            "kube-controller-manager exited with "
                + controllerManager.exitValue()
                + "; log: "
                + Files.readString(log));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Runs kubectl against the cluster and returns its combined output; fails on non-zero exit. */
  public String kubectl(String... args) {
    List<String> command = new ArrayList<>();
    command.add(kubectl());
    command.add("--kubeconfig=" + kubeconfig);
    command.addAll(List.of(args));
    try {
      Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
      String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!process.waitFor(Duration.ofSeconds(60).toSeconds(), TimeUnit.SECONDS)
          || process.exitValue() != 0) {
        throw new IllegalStateException("kubectl " + String.join(" ", args) + " failed: " + output);
      }
      return output;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private boolean closed;

  @Override
  public synchronized void close() {
    if (closed) {
      return; // called explicitly and again by the shutdown hook
    }
    closed = true;
    if (controllerManager != null) {
      controllerManager.destroyForcibly();
      controllerManager = null;
    }
    if (apiServer != null) {
      apiServer.stop();
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  /**
   * The Kubernetes version to test against: {@code -Dkube.version}, else {@code KUBE_VERSION} (as
   * for hack/build-kube-binaries.sh), else the one pinned in {@value #VERSIONS_FILE}.
   */
  static String kubeVersion() {
    String override =
        firstNonBlank(System.getProperty("kube.version"), System.getenv("KUBE_VERSION"));
    if (override != null && !override.isBlank()) {
      return override.trim();
    }
    Path file = RealKubernetesExtension.repoRoot().resolve(VERSIONS_FILE);
    try (Stream<String> lines = Files.lines(file)) {
      return lines
          .filter(line -> line.startsWith("KUBE_VERSION="))
          .map(line -> line.substring("KUBE_VERSION=".length()).trim())
          .findFirst()
          .orElseThrow(() -> new IllegalStateException("no KUBE_VERSION= line in " + file));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the pinned Kubernetes version", e);
    }
  }

  private static String firstNonBlank(String a, String b) {
    return a != null && !a.isBlank() ? a : b;
  }

  /**
   * Whether a CRD is served (condition Established=True). Null-safe: right after creation the API
   * server may report a status whose conditions are not set yet.
   */
  public static boolean established(
      io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition crd) {
    return crd != null
        && crd.getStatus() != null
        && crd.getStatus().getConditions() != null
        && crd.getStatus().getConditions().stream()
            .anyMatch(c -> "Established".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  /**
   * kube-api-test's directory suffix for this machine ({@code linux-amd64}, {@code linux-arm64}),
   * the one hack/build-kube-binaries.sh builds into.
   */
  public static String osArch() {
    OSInfo os = new OSInfo();
    return os.getOSName() + "-" + os.getOSArch();
  }
}
