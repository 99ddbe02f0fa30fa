package io.bloomoperator.cli;

import io.bloomoperator.objectstore.S3ChunkStore;
import io.bloomoperator.snapshot.CaCertificates;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import picocli.CommandLine.Option;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.ProfileCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * Where a store-backed filter's chunks are read from: the object store's endpoint, bucket and
 * credentials come from the command line (or an AWS profile), never from the manifest, as for any
 * reader: whoever may edit a ConfigMap must not point the CLI at another server.
 */
final class StoreOptions {

  private static final int MAX_KEY_FILE_BYTES = 4096;

  @Option(
      names = "--store-endpoint",
      paramLabel = "<url>",
      description =
          "S3 endpoint of the object store a store-backed filter's chunks are in (the"
              + " BloomStore's spec.endpoint); required to read such a filter from the cluster.")
  URI endpoint;

  @Option(
      names = "--store-bucket",
      paramLabel = "<bucket>",
      description = "The store's bucket (required with --store-endpoint).")
  String bucket;

  @Option(
      names = "--store-prefix",
      paramLabel = "<prefix>",
      description = "The store's key prefix (default: ${DEFAULT-VALUE}).")
  String prefix = "bloom";

  @Option(
      names = "--store-region",
      paramLabel = "<region>",
      description = "Region requests are signed for (default: ${DEFAULT-VALUE}).")
  String region = "us-east-1";

  @Option(
      names = "--store-virtual-host",
      description = "Virtual-host addressing (bucket.endpoint) instead of path-style.")
  boolean virtualHost;

  @Option(
      names = "--store-profile",
      paramLabel = "<name>",
      description = "AWS profile (~/.aws/credentials) with read credentials.")
  String profile;

  @Option(
      names = "--store-access-key-file",
      paramLabel = "<path>",
      description =
          "File holding the access key id (with --store-secret-key-file); default: the AWS SDK's"
              + " default credential chain.")
  Path accessKeyFile;

  @Option(
      names = "--store-secret-key-file",
      paramLabel = "<path>",
      description = "File holding the secret access key.")
  Path secretKeyFile;

  @Option(
      names = "--store-ca-file",
      paramLabel = "<path>",
      description =
          "PEM CA bundle that verifies the store's TLS certificate instead of the JVM's default CAs"
              + " (the bundle the BloomStore's spec.tls.caBundle names).")
  Path caFile;

  /** Whether a store was given. */
  boolean given() {
    return endpoint != null;
  }

  /** A client of the store given, for the caller to close. */
  S3Client client(String storeName) throws CliException {
    if (endpoint == null || bucket == null) {
      throw new CliException(
          "the snapshot's chunks are in object store '"
              + storeName
              + "': give --store-endpoint and --store-bucket (from BloomStore "
              + storeName
              + "; the manifest never says where a store is) and read credentials");
    }
    String scheme = endpoint.getScheme();
    if (!("https".equals(scheme) || "http".equals(scheme)) || endpoint.getHost() == null) {
      throw new CliException("--store-endpoint must be an http(s) URL");
    }
    // The operator's HTTP stack (Apache HttpClient 5), without its egress policy: the CLI runs with
    // the rights of whoever runs it, on an endpoint they chose, so there is nothing to confine;
    // the SDK's defaults apply, including the JVM's and the environment's proxy settings.
    Apache5HttpClient.Builder http =
        Apache5HttpClient.builder()
            .connectionTimeout(Duration.ofSeconds(10))
            .socketTimeout(Duration.ofSeconds(30));
    if (caFile != null) {
      CaCertificates ca = caCertificates();
      http.tlsTrustManagersProvider(ca::trustManagers);
    }
    return S3Client.builder()
        .endpointOverride(endpoint)
        .region(Region.of(region))
        .forcePathStyle(!virtualHost)
        .credentialsProvider(credentials())
        .httpClientBuilder(http)
        // Every chunk's sha256 is verified by the decoder; CRC trailers are what S3-compatible
        // stores most often get wrong.
        .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
        .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
        .build();
  }

  /** The filter's chunks in the store, read-only use. */
  S3ChunkStore chunks(S3Client client, String storeName, String namespace, String filter) {
    return new S3ChunkStore(
        client, storeName, bucket, prefix, namespace, filter, Duration.ZERO, Clock.systemUTC());
  }

  private CaCertificates caCertificates() throws CliException {
    try {
      return CaCertificates.read(caFile);
    } catch (java.io.IOException e) {
      throw new CliException("cannot read " + caFile + ": " + e.getMessage(), e);
    } catch (IllegalArgumentException e) {
      throw new CliException("--store-ca-file " + caFile + ": " + e.getMessage(), e);
    }
  }

  private AwsCredentialsProvider credentials() throws CliException {
    if ((accessKeyFile == null) != (secretKeyFile == null)) {
      throw new CliException("give both --store-access-key-file and --store-secret-key-file");
    }
    if (accessKeyFile != null) {
      if (profile != null) {
        throw new CliException("give either --store-profile or key files, not both");
      }
      return StaticCredentialsProvider.create(
          AwsBasicCredentials.create(read(accessKeyFile), read(secretKeyFile)));
    }
    if (profile != null) {
      return ProfileCredentialsProvider.builder().profileName(profile).build();
    }
    return DefaultCredentialsProvider.builder().build();
  }

  private static String read(Path file) throws CliException {
    try {
      if (Files.size(file) > MAX_KEY_FILE_BYTES) {
        throw new CliException(file + " is too large for a key");
      }
      return Files.readString(file, StandardCharsets.UTF_8).strip();
    } catch (java.io.IOException e) {
      throw new CliException("cannot read " + file + ": " + e.getMessage(), e);
    }
  }
}
