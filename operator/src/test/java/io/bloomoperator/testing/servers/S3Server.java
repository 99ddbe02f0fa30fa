package io.bloomoperator.testing.servers;

import io.bloomoperator.snapshot.CaCertificates;
import io.bloomoperator.testing.RealKubernetesExtension;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * A real S3-compatible server: versitygw with its POSIX backend (built by {@code
 * hack/build-s3-server.sh}), on a free port of 127.0.0.1, storing buckets as directories of a fresh
 * temporary directory, with a random root access key and secret generated per server. {@link
 * #shared()} is one server per test JVM; {@link #start()} is a server of one test's own, for tests
 * that stop it (a store that is down). A missing binary fails the test naming the script: never a
 * skip.
 */
public final class S3Server implements AutoCloseable {

  /** versitygw's default region; the SDK signs with it, and the server checks the signature. */
  public static final String REGION = "us-east-1";

  private static final String BUILD_SCRIPT = "hack/build-s3-server.sh";
  private static final long STARTUP_TIMEOUT_MILLIS = 20_000;
  private static final SecureRandom RANDOM = new SecureRandom();

  private static S3Server shared;

  private final Path binary;
  private Process process;
  private final Path dir;
  private final int port;
  private final String accessKey;
  private final String secretKey;
  private final Tls tls;
  private final AtomicInteger buckets = new AtomicInteger();

  /**
   * How a server speaks TLS: its certificate and key, and the CA that verifies them (the test's own
   * clients trust it).
   */
  public record Tls(TestCertificates.ServerCertificate certificate, Path ca) {}

  private S3Server(
      Path binary,
      Process process,
      Path dir,
      int port,
      String accessKey,
      String secretKey,
      Tls tls) {
    this.binary = binary;
    this.process = process;
    this.dir = dir;
    this.port = port;
    this.accessKey = accessKey;
    this.secretKey = secretKey;
    this.tls = tls;
  }

  /** The server of this JVM, started on first call and stopped at JVM exit. */
  public static synchronized S3Server shared() {
    if (shared == null) {
      shared = start();
      Runtime.getRuntime().addShutdownHook(new Thread(shared::close, "s3-stop"));
    }
    return shared;
  }

  /** A server of the caller's own; {@link #close()} stops it and deletes its data. */
  public static S3Server start() {
    return start(Map.of());
  }

  /**
   * A server of the caller's own with versitygw's internal IAM ({@code --iam-dir}) holding {@code
   * users} (access key id to secret) besides root, each with the role {@code user}: they own no
   * bucket, so they may do only what a bucket policy grants them (e.g. a read-only reader).
   */
  public static S3Server start(Map<String, String> users) {
    Path binary = findBinary();
    return ServerProcesses.startOnFreePort(port -> startOn(binary, port, users, null));
  }

  /** A server of the caller's own that serves only HTTPS, with {@code tls}'s certificate. */
  public static S3Server startTls(Tls tls) {
    Path binary = findBinary();
    return ServerProcesses.startOnFreePort(port -> startOn(binary, port, Map.of(), tls));
  }

  /**
   * The file versitygw's POSIX backend keeps object {@code key} of {@code bucket} in: rewriting it
   * is how a test tampers with an object behind the server's back.
   */
  public Path objectFile(String bucket, String key) {
    return dir.resolve("data").resolve(bucket).resolve(key);
  }

  /**
   * {@code http://127.0.0.1:<port>} ({@code https} for a TLS server): the endpoint a client is
   * configured with (path-style).
   */
  public URI endpoint() {
    return URI.create((tls == null ? "http" : "https") + "://127.0.0.1:" + port);
  }

  public int port() {
    return port;
  }

  /** The root user's access key id, which may do anything on this server. */
  public String accessKey() {
    return accessKey;
  }

  /** The root user's secret access key. */
  public String secretKey() {
    return secretKey;
  }

  /** A client signing as the root user. */
  public S3Client client() {
    return client(accessKey, secretKey);
  }

  /**
   * A client of this server with the given credentials, configured as the transport will be:
   * path-style addressing (a loopback endpoint has no bucket host names) and the JDK-based HTTP
   * client. Checksums only where an operation requires them: the transport verifies sha256 itself,
   * and the SDK's default CRC trailers in aws-chunked uploads are what S3-compatible stores most
   * often reject.
   */
  public S3Client client(String accessKeyId, String secretAccessKey) {
    UrlConnectionHttpClient.Builder http = UrlConnectionHttpClient.builder();
    if (tls != null) {
      try {
        CaCertificates ca = CaCertificates.read(tls.ca());
        http.tlsTrustManagersProvider(ca::trustManagers);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return S3Client.builder()
        .endpointOverride(endpoint())
        .region(Region.of(REGION))
        .forcePathStyle(true)
        .credentialsProvider(
            StaticCredentialsProvider.create(
                AwsBasicCredentials.create(accessKeyId, secretAccessKey)))
        .httpClientBuilder(http)
        .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
        .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
        .build();
  }

  /** Creates a bucket with a name unique on this server and returns the name. */
  public String createBucket(String prefix) {
    String name = prefix + "-" + buckets.incrementAndGet() + "-" + hex(3);
    try (S3Client client = client()) {
      client.createBucket(b -> b.bucket(name));
    }
    return name;
  }

  /**
   * Creates a bucket (as {@link #createBucket}) whose only grant to {@code reader} is GET under
   * {@code keyPrefix}: what an IAM policy gives a reader on AWS.
   */
  public String createReadOnlyBucket(String prefix, String reader, String keyPrefix) {
    String bucket = createBucket(prefix);
    try (S3Client root = client()) {
      root.putBucketPolicy(
          b ->
              b.bucket(bucket)
                  .policy(
                      "{\"Version\":\"2012-10-17\",\"Statement\":[{\"Effect\":\"Allow\","
                          + "\"Principal\":{\"AWS\":[\""
                          + reader
                          + "\"]},\"Action\":[\"s3:GetObject\"],"
                          + "\"Resource\":[\"arn:aws:s3:::"
                          + bucket
                          + "/"
                          + keyPrefix
                          + "/*\"]}]}"));
    }
    return bucket;
  }

  /** Whether the server process is running. */
  public boolean isAlive() {
    return process.isAlive();
  }

  /** Stops the server process and keeps its data: the store is down until {@link #restart()}. */
  public synchronized void stop() {
    ServerProcesses.stop(process, 10);
  }

  /** Starts the server again on the same port, with the same data and credentials. */
  public synchronized void restart() {
    if (process.isAlive()) {
      throw new IllegalStateException("versitygw is running");
    }
    try {
      process = launch(binary, port, dir, accessKey, secretKey, tls);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot restart " + binary, e);
    }
    awaitListening();
  }

  /** SIGTERM (SIGKILL after 10 s), then deletes the stored objects. */
  @Override
  public void close() {
    ServerProcesses.stop(process, 10);
    ServerProcesses.deleteTree(dir);
  }

  private static S3Server startOn(Path binary, int port, Map<String, String> users, Tls tls) {
    Path dir;
    Process process;
    String accessKey = "bloom" + hex(8);
    String secretKey = hex(20);
    try {
      dir = Files.createTempDirectory("bloom-s3-");
      Files.createDirectory(dir.resolve("data"));
      if (!users.isEmpty()) {
        // versitygw's internal IAM reads its accounts from users.json in this directory.
        Path iam = Files.createDirectory(dir.resolve("iam"));
        StringBuilder accounts = new StringBuilder("{\"accessAccounts\":{");
        users.forEach(
            (access, secret) ->
                accounts
                    .append(accounts.charAt(accounts.length() - 1) == '{' ? "" : ",")
                    .append('"')
                    .append(access)
                    .append("\":{\"access\":\"")
                    .append(access)
                    .append("\",\"secret\":\"")
                    .append(secret)
                    .append("\",\"role\":\"user\"}"));
        accounts.append("}}");
        Files.writeString(iam.resolve("users.json"), accounts, StandardCharsets.UTF_8);
      }
      process = launch(binary, port, dir, accessKey, secretKey, tls);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + binary, e);
    }
    S3Server server = new S3Server(binary, process, dir, port, accessKey, secretKey, tls);
    server.awaitListening();
    return server;
  }

  private static Process launch(
      Path binary, int port, Path dir, String accessKey, String secretKey, Tls tls)
      throws IOException {
    // The credentials go in the environment (versitygw reads ROOT_ACCESS_KEY_ID and
    // ROOT_SECRET_ACCESS_KEY), not the command line, which other local users can read.
    List<String> command = new ArrayList<>(List.of(binary.toString()));
    if (Files.isDirectory(dir.resolve("iam"))) {
      command.addAll(List.of("--iam-dir", dir.resolve("iam").toString()));
    }
    if (tls != null) {
      command.addAll(
          List.of(
              "--cert",
              tls.certificate().certificate().toString(),
              "--key",
              tls.certificate().key().toString()));
    }
    command.addAll(List.of("--port", "127.0.0.1:" + port, "posix", dir.resolve("data").toString()));
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(
                ProcessBuilder.Redirect.appendTo(dir.resolve("versitygw.log").toFile()));
    builder.environment().put("ROOT_ACCESS_KEY_ID", accessKey);
    builder.environment().put("ROOT_SECRET_ACCESS_KEY", secretKey);
    builder.environment().put("VGW_REGION", REGION);
    return builder.start();
  }

  private void awaitListening() {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STARTUP_TIMEOUT_MILLIS);
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        String log = log();
        close();
        throw new IllegalStateException(
            "versitygw on port " + port + " exited with " + process.exitValue() + ":\n" + log);
      }
      if (listening(port)) {
        return;
      }
      ServerProcesses.sleep(50, "versitygw");
    }
    String log = log();
    close();
    throw new IllegalStateException(
        "versitygw on port "
            + port
            + " did not listen within "
            + STARTUP_TIMEOUT_MILLIS
            + " ms:\n"
            + log);
  }

  private String log() {
    try {
      return Files.readString(dir.resolve("versitygw.log"), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  private static boolean listening(int port) {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static Path findBinary() {
    // The script owns the version and the cache directory; --path builds nothing.
    Path script = RealKubernetesExtension.repoRoot().resolve(BUILD_SCRIPT);
    String out = ServerProcesses.run(script.getParent(), "bash", script.toString(), "--path");
    Path binary = Path.of(out.strip());
    if (!Files.isExecutable(binary)) {
      throw new IllegalStateException(
          "versitygw not found at "
              + binary
              + ". Build it with `bash "
              + BUILD_SCRIPT
              + "` (needs Go and the Go module proxy; `mvn verify` runs it in its validate phase).");
    }
    return binary;
  }

  private static String hex(int bytes) {
    byte[] b = new byte[bytes];
    RANDOM.nextBytes(b);
    return HexFormat.of().formatHex(b);
  }
}
