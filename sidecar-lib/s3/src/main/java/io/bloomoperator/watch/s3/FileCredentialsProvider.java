package io.bloomoperator.watch.s3;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkClientException;

/**
 * An access key pair read from two files, e.g. the keys of a Secret of the application's own
 * namespace mounted as a volume. Read at every request: the kubelet replaces a mounted Secret's
 * files when the Secret changes, so rotated keys are used without a restart, and two small reads
 * cost nothing beside a chunk download.
 */
final class FileCredentialsProvider implements AwsCredentialsProvider {

  /** Far above any access key or secret; bounds what a wrong path (a large file) reads. */
  private static final int MAX_FILE_BYTES = 4096;

  private final Path accessKeyIdFile;
  private final Path secretAccessKeyFile;

  FileCredentialsProvider(Path accessKeyIdFile, Path secretAccessKeyFile) {
    this.accessKeyIdFile = accessKeyIdFile;
    this.secretAccessKeyFile = secretAccessKeyFile;
  }

  @Override
  public AwsCredentials resolveCredentials() {
    return AwsBasicCredentials.create(read(accessKeyIdFile), read(secretAccessKeyFile));
  }

  private static String read(Path file) {
    try (InputStream in = Files.newInputStream(file)) {
      byte[] bytes = in.readNBytes(MAX_FILE_BYTES + 1);
      if (bytes.length > MAX_FILE_BYTES) {
        throw SdkClientException.create(
            "credentials file " + file + " is larger than " + MAX_FILE_BYTES + " bytes");
      }
      String value = new String(bytes, StandardCharsets.UTF_8).strip();
      if (value.isEmpty()) {
        throw SdkClientException.create("credentials file " + file + " is empty");
      }
      return value;
    } catch (IOException e) {
      // The path is the application's configuration, not a secret; the content is never quoted.
      throw SdkClientException.create("cannot read credentials file " + file + ": " + e, e);
    }
  }

  @Override
  public String toString() {
    return "FileCredentialsProvider(" + accessKeyIdFile + ", " + secretAccessKeyFile + ")";
  }
}
