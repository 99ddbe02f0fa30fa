package io.bloomoperator.lookup;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.watch.s3.S3ObjectStore;
import java.net.URI;
import java.util.List;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;

/**
 * What {@code bloom-sidecar-s3} leaves out of an application's (and this sidecar's) class path: the
 * AWS SDK's event streams, ARN parsing and Common Runtime bindings, which ranged GETs of plain
 * buckets never load. ObjectStoreTransportTest reads through the same class path from a real S3
 * server; this test makes sure the exclusions stay in force and that a store still builds in both
 * addressing styles without them.
 */
class S3ObjectStoreClassPathTest {

  @Test
  void theExcludedSdkModulesAreNotOnTheClassPath() {
    for (String absent :
        List.of(
            "software.amazon.awssdk.eventstream.Message",
            "software.amazon.awssdk.http.auth.aws.eventstream.HttpAuthAwsEventStream",
            "software.amazon.awssdk.arns.Arn",
            "software.amazon.awssdk.crtcore.CrtProxyConfiguration")) {
      assertThat(loadable(absent)).as(absent).isFalse();
    }
    assertThat(loadable("software.amazon.awssdk.services.s3.S3Client")).isTrue();
  }

  @Test
  void aStoreBuildsInBothAddressingStyles() {
    for (boolean pathStyle : List.of(true, false)) {
      try (S3ObjectStore store =
          S3ObjectStore.builder()
              .endpoint(URI.create("http://127.0.0.1:9"))
              .bucket("snapshots")
              .prefix("bloom")
              .region("us-east-1")
              .pathStyle(pathStyle)
              .credentials(
                  StaticCredentialsProvider.create(AwsBasicCredentials.create("id", "secret")))
              .build()) {
        assertThat(store.prefix()).startsWith("bloom");
      }
    }
  }

  private static boolean loadable(String className) {
    try {
      Class.forName(className, false, S3ObjectStoreClassPathTest.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }
}
