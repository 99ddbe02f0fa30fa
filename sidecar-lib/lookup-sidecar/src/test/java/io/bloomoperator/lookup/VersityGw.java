package io.bloomoperator.lookup;

import io.bloomoperator.testing.RealKubernetesExtension;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * A real S3-compatible server for the sidecar's object-store tests: versitygw with its POSIX
 * backend, the binary the operator's object-store tests use ({@code hack/build-s3-server.sh}, run
 * by {@code mvn verify}'s validate phase), on a free loopback port, with a random root key pair
 * given in its environment (never on its command line). The operator's own launcher lives in its
 * test sources, which this module cannot depend on (the operator's image tests depend on this
 * module). A missing binary fails the test naming the script: never a skip.
 */
final class VersityGw implements AutoCloseable {

  static final String REGION = "us-east-1";

  private final Process process;
  private final Path dir;
  private final int port;
  private final String accessKey;
  private final String secretKey;

  private VersityGw(Process process, Path dir, int port, String accessKey, String secretKey) {
    this.process = process;
    this.dir = dir;
    this.port = port;
    this.accessKey = accessKey;
    this.secretKey = secretKey;
  }

  static VersityGw start() throws IOException, InterruptedException {
    Path script = RealKubernetesExtension.repoRoot().resolve("hack/build-s3-server.sh");
    Process which = new ProcessBuilder("bash", script.toString(), "--path").start();
    String out = new String(which.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    which.waitFor(30, TimeUnit.SECONDS);
    Path binary = Path.of(out.strip());
    if (!Files.isExecutable(binary)) {
      throw new IllegalStateException(
          "versitygw not found at " + binary + ": build it with `bash hack/build-s3-server.sh`");
    }
    SecureRandom random = new SecureRandom();
    String accessKey = "bloom" + hex(random, 8);
    String secretKey = hex(random, 20);
    Path dir = Files.createTempDirectory("bloom-lookup-s3-");
    Files.createDirectory(dir.resolve("data"));
    int port;
    try (ServerSocket free = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = free.getLocalPort();
    }
    ProcessBuilder builder =
        new ProcessBuilder(binary.toString(), "--port", "127.0.0.1:" + port, "posix", dir + "/data")
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("versitygw.log").toFile());
    builder.environment().put("ROOT_ACCESS_KEY_ID", accessKey);
    builder.environment().put("ROOT_SECRET_ACCESS_KEY", secretKey);
    builder.environment().put("VGW_REGION", REGION);
    VersityGw server = new VersityGw(builder.start(), dir, port, accessKey, secretKey);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (System.nanoTime() < deadline) {
      if (!server.process.isAlive()) {
        server.close();
        throw new IllegalStateException("versitygw exited at start (port " + port + ")");
      }
      try (Socket socket = new Socket()) {
        socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
        return server;
      } catch (IOException notYet) {
        Thread.sleep(50);
      }
    }
    server.close();
    throw new IllegalStateException("versitygw did not listen on port " + port + " within 20 s");
  }

  URI endpoint() {
    return URI.create("http://127.0.0.1:" + port);
  }

  String accessKey() {
    return accessKey;
  }

  String secretKey() {
    return secretKey;
  }

  /** The file the POSIX backend keeps an object in: rewriting it tampers behind the server. */
  Path objectFile(String bucket, String key) {
    return dir.resolve("data").resolve(bucket).resolve(key);
  }

  /** A root client configured as sidecar-lib's store is (path style, JDK HTTP client). */
  S3Client client() {
    return S3Client.builder()
        .endpointOverride(endpoint())
        .region(Region.of(REGION))
        .forcePathStyle(true)
        .credentialsProvider(
            StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, secretKey)))
        .httpClientBuilder(UrlConnectionHttpClient.builder())
        .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
        .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
        .build();
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException ignored) {
      // a temporary directory; the test's result does not depend on it
    }
  }

  private static String hex(SecureRandom random, int bytes) {
    byte[] b = new byte[bytes];
    random.nextBytes(b);
    return HexFormat.of().formatHex(b);
  }
}
