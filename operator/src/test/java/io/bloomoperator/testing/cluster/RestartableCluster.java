package io.bloomoperator.testing.cluster;

import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * A Kubernetes control plane whose processes a test can kill and start again: one etcd and one or
 * more kube-apiservers on it, from the binaries of {@code hack/build-kube-binaries.sh} (the same
 * ones {@link io.bloomoperator.testing.KubeCluster} runs through kube-api-test, which cannot
 * restart a process on the same data and port). Every process keeps its port and etcd its data
 * directory across restarts, so clients see what they see when a real control-plane component
 * restarts.
 *
 * <p>Authentication is a static token of a {@code system:masters} user; each API server serves a
 * self-signed certificate it generates, which clients trust without checking (loopback only).
 */
public final class RestartableCluster implements AutoCloseable {

  private static final String TOKEN_USER = "fault-admin";

  private final Path binaries;
  private final Path work;
  private final String token;
  private final int etcdPort = freePort();
  private final int etcdPeerPort = freePort();
  private final long etcdQuotaBytes;
  private final List<ApiServer> apiServers = new ArrayList<>();
  private Process etcd;

  private RestartableCluster(Path binaries, Path work, long etcdQuotaBytes) {
    this.binaries = binaries;
    this.work = work;
    this.etcdQuotaBytes = etcdQuotaBytes;
    byte[] secret = new byte[24];
    new SecureRandom().nextBytes(secret);
    this.token = HexFormat.of().formatHex(secret);
  }

  /**
   * Starts etcd and {@code apiServers} kube-apiservers on it.
   *
   * @param etcdQuotaBytes etcd's --quota-backend-bytes, or 0 for its default
   */
  public static RestartableCluster start(int apiServers, long etcdQuotaBytes) {
    Path binaries = binaryDir();
    try {
      Path work = Files.createTempDirectory("restartable-cluster");
      RestartableCluster cluster = new RestartableCluster(binaries, work, etcdQuotaBytes);
      cluster.writeCredentials();
      cluster.startEtcd();
      for (int i = 0; i < apiServers; i++) {
        cluster.apiServers.add(cluster.new ApiServer(i));
        cluster.startApiServer(i);
      }
      return cluster;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (java.security.GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static Path binaryDir() {
    Path versions = RealKubernetesExtension.repoRoot().resolve("hack/kube-versions.env");
    String version;
    try (Stream<String> lines = Files.lines(versions)) {
      version =
          lines
              .filter(l -> l.startsWith("KUBE_VERSION="))
              .map(l -> l.substring("KUBE_VERSION=".length()).trim())
              .findFirst()
              .orElseThrow();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Path dir =
        Path.of(
            System.getProperty("user.home"),
            ".kubeapitest",
            "k8s",
            version + "-" + KubeCluster.osArch());
    if (!Files.isExecutable(dir.resolve("etcd"))
        || !Files.isExecutable(dir.resolve("kube-apiserver"))) {
      throw new IllegalStateException(
          "etcd and kube-apiserver not found in " + dir + "; run hack/build-kube-binaries.sh");
    }
    return dir;
  }

  private void writeCredentials() throws IOException, java.security.GeneralSecurityException {
    Files.writeString(
        work.resolve("tokens.csv"),
        token + "," + TOKEN_USER + ",fault-admin-uid,\"system:masters\"\n",
        StandardCharsets.UTF_8);
    var generator = KeyPairGenerator.getInstance("RSA");
    generator.initialize(2048);
    byte[] pkcs8 = generator.generateKeyPair().getPrivate().getEncoded();
    Files.writeString(
        work.resolve("service-accounts.key"),
        "-----BEGIN PRIVATE KEY-----\n"
            + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(pkcs8)
            + "\n-----END PRIVATE KEY-----\n",
        StandardCharsets.US_ASCII);
  }

  // ------------------------------------------------------------------ etcd

  /** Starts etcd on its port and data directory (again, after {@link #killEtcd()}). */
  public synchronized void startEtcd() {
    if (etcd != null && etcd.isAlive()) {
      throw new IllegalStateException("etcd is running");
    }
    String peer = "http://127.0.0.1:" + etcdPeerPort;
    List<String> command =
        new ArrayList<>(
            List.of(
                binaries.resolve("etcd").toString(),
                "--data-dir",
                work.resolve("etcd").toString(),
                "--listen-client-urls",
                etcdUrl(),
                "--advertise-client-urls",
                etcdUrl(),
                "--listen-peer-urls",
                peer,
                "--initial-advertise-peer-urls",
                peer,
                "--initial-cluster",
                "default=" + peer));
    if (etcdQuotaBytes > 0) {
      command.add("--quota-backend-bytes=" + etcdQuotaBytes);
    }
    etcd = launch(command, "etcd.log");
    awaitHttp(
        () -> HttpRequest.newBuilder(URI.create(etcdUrl() + "/health")).build(),
        body -> body.contains("\"health\":\"true\""),
        "etcd");
  }

  /** SIGKILL to etcd; returns once it is dead. */
  public synchronized void killEtcd() {
    kill(etcd);
  }

  private String etcdUrl() {
    return "http://127.0.0.1:" + etcdPort;
  }

  /**
   * Compacts etcd's history up to its current revision (what kube-apiserver does every 5 minutes),
   * so a watch resumed from an older resourceVersion gets 410 Gone.
   *
   * @return the revision compacted to
   */
  public long compactEtcd() {
    String range = etcdPost("/v3/kv/range", "{\"key\":\"" + b64("/") + "\"}");
    Matcher revision = Pattern.compile("\"revision\":\"(\\d+)\"").matcher(range);
    if (!revision.find()) {
      throw new IllegalStateException("no revision in etcd's answer: " + range);
    }
    long current = Long.parseLong(revision.group(1));
    etcdPost("/v3/kv/compaction", "{\"revision\":\"" + current + "\",\"physical\":true}");
    return current;
  }

  /** etcd's database size, what its quota is compared with ({@code dbSize} of its status). */
  public long etcdDbSize() {
    Matcher size =
        Pattern.compile("\"dbSize\":\\s*\"(\\d+)\"")
            .matcher(etcdPost("/v3/maintenance/status", "{}"));
    if (!size.find()) {
      throw new IllegalStateException("no dbSize in etcd's status");
    }
    return Long.parseLong(size.group(1));
  }

  /** Rewrites etcd's database without its free pages (after {@link #compactEtcd()}). */
  public void defragmentEtcd() {
    etcdPost("/v3/maintenance/defragment", "{}");
  }

  /** The alarms etcd has raised (e.g. {@code NOSPACE} once its quota is reached). */
  public List<String> etcdAlarms() {
    List<String> alarms = new ArrayList<>();
    Matcher alarm =
        Pattern.compile("\"alarm\":\\s*\"([A-Z]+)\"")
            .matcher(etcdPost("/v3/maintenance/alarm", "{\"action\":\"GET\"}"));
    while (alarm.find()) {
      alarms.add(alarm.group(1));
    }
    return alarms;
  }

  /**
   * Disarms etcd's NOSPACE alarm (what {@code etcdctl alarm disarm} does), so it accepts writes
   * again; only useful after space was freed ({@link #compactEtcd()}, {@link #defragmentEtcd()}).
   */
  public void disarmEtcdSpaceAlarm() {
    Matcher member =
        Pattern.compile("\"memberID\":\\s*\"(\\d+)\",\\s*\"alarm\":\\s*\"NOSPACE\"")
            .matcher(etcdPost("/v3/maintenance/alarm", "{\"action\":\"GET\"}"));
    while (member.find()) {
      etcdPost(
          "/v3/maintenance/alarm",
          "{\"action\":\"DEACTIVATE\",\"memberID\":\""
              + member.group(1)
              + "\",\"alarm\":\"NOSPACE\"}");
    }
  }

  private String etcdPost(String path, String json) {
    try {
      HttpResponse<String> response =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(URI.create(etcdUrl() + path))
                      .POST(HttpRequest.BodyPublishers.ofString(json))
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        throw new IllegalStateException(path + " answered " + response.statusCode());
      }
      return response.body();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static String b64(String text) {
    return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
  }

  // ------------------------------------------------------------ API servers

  /** Starts API server {@code index} on its port (again, after {@link #killApiServer}). */
  public synchronized void startApiServer(int index) {
    ApiServer server = apiServers.get(index);
    if (server.process != null && server.process.isAlive()) {
      throw new IllegalStateException("API server " + index + " is running");
    }
    Path certs = work.resolve("apiserver-" + index);
    String key = work.resolve("service-accounts.key").toString();
    server.process =
        launch(
            List.of(
                binaries.resolve("kube-apiserver").toString(),
                "--etcd-servers",
                etcdUrl(),
                "--bind-address",
                "127.0.0.1",
                "--advertise-address",
                "127.0.0.1",
                "--secure-port",
                Integer.toString(server.port),
                "--cert-dir",
                certs.toString(),
                "--token-auth-file",
                work.resolve("tokens.csv").toString(),
                "--authorization-mode",
                "RBAC",
                "--service-account-issuer",
                "https://localhost",
                "--service-account-key-file",
                key,
                "--service-account-signing-key-file",
                key,
                "--disable-admission-plugins",
                "ServiceAccount",
                "--service-cluster-ip-range",
                "10.0.0.0/24",
                "--allow-privileged"),
            "apiserver-" + index + ".log");
    awaitHttp(
        () ->
            HttpRequest.newBuilder(URI.create(server.url() + "/readyz"))
                .header("Authorization", "Bearer " + token)
                .build(),
        "ok"::equals,
        "kube-apiserver " + index);
  }

  /** SIGKILL to API server {@code index}; returns once it is dead. */
  public synchronized void killApiServer(int index) {
    kill(apiServers.get(index).process);
  }

  /** Client configuration for API server {@code index}. */
  public Config clientConfig(int index) {
    return new ConfigBuilder(Config.empty())
        .withMasterUrl(apiServers.get(index).url())
        .withOauthToken(token)
        .withTrustCerts(true)
        .withNamespace("default")
        .build();
  }

  /** A new client of API server {@code index}; the caller closes it. */
  public KubernetesClient newClient(int index) {
    return new KubernetesClientBuilder().withConfig(clientConfig(index)).build();
  }

  /** A kubeconfig file for API server {@code index}, e.g. for an operator process. */
  public Path kubeconfig(int index) {
    Path file = work.resolve("kubeconfig-" + index + ".yaml");
    String yaml =
        """
        apiVersion: v1
        kind: Config
        clusters:
        - name: c
          cluster: {server: "%s", insecure-skip-tls-verify: true}
        users:
        - name: u
          user: {token: "%s"}
        contexts:
        - name: c
          context: {cluster: c, user: u, namespace: default}
        current-context: c
        """
            .formatted(apiServers.get(index).url(), token);
    try {
      Files.writeString(file, yaml, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return file;
  }

  /** Creates every CRD of a repository directory and waits until each is served. */
  public void installCrds(String repoDir) {
    try (KubernetesClient client = newClient(0);
        Stream<Path> files = Files.list(RealKubernetesExtension.repoRoot().resolve(repoDir))) {
      for (Path file :
          files
              .filter(f -> f.toString().endsWith(".yml") || f.toString().endsWith(".yaml"))
              .sorted()
              .toList()) {
        try (InputStream in = Files.newInputStream(file)) {
          for (var item : client.load(in).items()) {
            if (item instanceof CustomResourceDefinition crd) {
              client.resource(crd).forceConflicts().serverSideApply();
              client
                  .apiextensions()
                  .v1()
                  .customResourceDefinitions()
                  .withName(crd.getMetadata().getName())
                  .waitUntilCondition(
                      io.bloomoperator.testing.KubeCluster::established, 60, TimeUnit.SECONDS);
            }
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Where each process's output goes (etcd.log, apiserver-N.log). */
  public Path logDirectory() {
    return work;
  }

  @Override
  public synchronized void close() {
    for (ApiServer server : apiServers) {
      kill(server.process);
    }
    kill(etcd);
  }

  private final class ApiServer {
    private final int port = freePort();
    private Process process;

    ApiServer(int index) {}

    String url() {
      return "https://127.0.0.1:" + port;
    }
  }

  // ------------------------------------------------------------ processes

  private Process launch(List<String> command, String logName) {
    try {
      return new ProcessBuilder(command)
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(work.resolve(logName).toFile()))
          .start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void kill(Process process) {
    if (process == null) {
      return;
    }
    process.destroyForcibly();
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("process " + process.pid() + " survived SIGKILL");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void awaitHttp(
      java.util.function.Supplier<HttpRequest> request,
      java.util.function.Predicate<String> ready,
      String what) {
    HttpClient http = HttpClient.newBuilder().sslContext(trustAll()).build();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (System.nanoTime() < deadline) {
      try {
        HttpResponse<String> response =
            http.send(request.get(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() == 200 && ready.test(response.body().trim())) {
          return;
        }
      } catch (IOException e) {
        // not listening yet
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
    throw new IllegalStateException(what + " not ready within 120 s; logs in " + work);
  }

  /** Loopback processes of this fixture serve self-signed certificates. */
  private static SSLContext trustAll() {
    try {
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(
          null,
          new TrustManager[] {
            new X509TrustManager() {
              @Override
              public void checkClientTrusted(X509Certificate[] chain, String authType) {}

              @Override
              public void checkServerTrusted(X509Certificate[] chain, String authType) {}

              @Override
              public X509Certificate[] getAcceptedIssuers() {
                return new X509Certificate[0];
              }
            }
          },
          new SecureRandom());
      return context;
    } catch (java.security.GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
