package io.bloomoperator.testing.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * What the object-store transport (issue 19) will rely on, on a real S3 server (versitygw) through
 * the client configuration it will use ({@link S3Server#client}): immutable chunk objects written
 * once, read in ranges, listed per filter prefix page by page (janitor, deletion), deleted one by
 * one and in batches (finalizer), and refused to a client whose secret is wrong.
 */
class S3ServerSmokeTest {

  private static S3Server server;
  private static S3Client client;
  private static String bucket;

  @BeforeAll
  static void start() {
    server = S3Server.shared();
    client = server.client();
    bucket = server.createBucket("smoke");
  }

  @AfterAll
  static void closeClient() {
    client.close();
  }

  @Test
  void putThenRangedGetReturnsExactlyTheRequestedBytes() {
    byte[] payload = randomBytes(1 << 20, 1);
    client.putObject(b -> b.bucket(bucket).key("ns/f/base-1"), RequestBody.fromBytes(payload));

    ResponseBytes<GetObjectResponse> part =
        client.getObjectAsBytes(b -> b.bucket(bucket).key("ns/f/base-1").range("bytes=1000-66535"));

    assertThat(part.asByteArray()).isEqualTo(Arrays.copyOfRange(payload, 1000, 66536));
    assertThat(part.response().contentRange()).isEqualTo("bytes 1000-66535/" + payload.length);
    assertThat(part.response().contentLength()).isEqualTo(65536L);
    // The tail, as a resumed download asks for it (open-ended range).
    byte[] tail =
        client
            .getObjectAsBytes(
                b ->
                    b.bucket(bucket)
                        .key("ns/f/base-1")
                        .range("bytes=" + (payload.length - 10) + "-"))
            .asByteArray();
    assertThat(tail).isEqualTo(Arrays.copyOfRange(payload, payload.length - 10, payload.length));
  }

  @Test
  void listingByPrefixPagesAndStaysInsideThePrefix() {
    for (int i = 0; i < 5; i++) {
      put("list/f1/chunk-" + i, "x" + i);
    }
    // A sibling whose name starts with the same characters: "list/f1" without the slash would
    // match it, so the prefix a filter's objects are listed under must end with '/'.
    put("list/f10/chunk-0", "y");

    List<ListObjectsV2Response> pages =
        client.listObjectsV2Paginator(b -> b.bucket(bucket).prefix("list/f1/").maxKeys(2)).stream()
            .toList();

    assertThat(pages).hasSize(3);
    assertThat(pages.get(0).isTruncated()).isTrue();
    assertThat(pages.get(2).isTruncated()).isFalse();
    assertThat(pages.stream().flatMap(p -> p.contents().stream()).map(S3Object::key))
        .containsExactly(
            "list/f1/chunk-0",
            "list/f1/chunk-1",
            "list/f1/chunk-2",
            "list/f1/chunk-3",
            "list/f1/chunk-4");
    assertThat(pages.get(0).contents().get(0).size()).isEqualTo(2L);
  }

  @Test
  void deletedObjectsAreGoneAndDeletingAMissingObjectSucceeds() {
    put("del/f/a", "a");
    put("del/f/b", "b");
    put("del/f/c", "c");

    client.deleteObject(b -> b.bucket(bucket).key("del/f/a"));
    // The finalizer deletes a filter's objects in batches of up to 1000 keys per request.
    client.deleteObjects(
        b ->
            b.bucket(bucket)
                .delete(
                    d ->
                        d.objects(
                            ObjectIdentifier.builder().key("del/f/b").build(),
                            ObjectIdentifier.builder().key("del/f/c").build())));
    // Idempotent: a retried deletion after a crash must not fail on what is already gone.
    client.deleteObject(b -> b.bucket(bucket).key("del/f/a"));

    assertThatThrownBy(() -> client.headObject(b -> b.bucket(bucket).key("del/f/a")))
        .isInstanceOfSatisfying(S3Exception.class, e -> assertThat(e.statusCode()).isEqualTo(404));
    assertThatThrownBy(() -> client.getObject(b -> b.bucket(bucket).key("del/f/b")))
        .isInstanceOf(NoSuchKeyException.class);
    assertThat(client.listObjectsV2(b -> b.bucket(bucket).prefix("del/")).contents()).isEmpty();
  }

  @Test
  void conditionalPutRefusesToOverwriteAnExistingObject() {
    // Chunk objects are immutable: a second writer (a stale leader, a retried upload) must not
    // replace bytes a manifest already names.
    client.putObject(
        b -> b.bucket(bucket).key("cond/f/base-1").ifNoneMatch("*"),
        RequestBody.fromString("first", StandardCharsets.UTF_8));

    assertThatThrownBy(
            () ->
                client.putObject(
                    b -> b.bucket(bucket).key("cond/f/base-1").ifNoneMatch("*"),
                    RequestBody.fromString("second", StandardCharsets.UTF_8)))
        .isInstanceOfSatisfying(S3Exception.class, e -> assertThat(e.statusCode()).isEqualTo(412));
    assertThat(client.getObjectAsBytes(b -> b.bucket(bucket).key("cond/f/base-1")).asUtf8String())
        .isEqualTo("first");
  }

  @Test
  void aWrongSecretKeyIsRefused() {
    put("auth/f/a", "secret bytes");
    try (S3Client wrong = server.client(server.accessKey(), server.secretKey() + "x")) {
      assertThatThrownBy(() -> wrong.getObjectAsBytes(b -> b.bucket(bucket).key("auth/f/a")))
          .isInstanceOfSatisfying(
              S3Exception.class, e -> assertThat(e.statusCode()).isEqualTo(403));
      assertThatThrownBy(
              () ->
                  wrong.putObject(
                      b -> b.bucket(bucket).key("auth/f/b"), RequestBody.fromString("forged")))
          .isInstanceOfSatisfying(
              S3Exception.class, e -> assertThat(e.statusCode()).isEqualTo(403));
    }
    assertThat(client.listObjectsV2(b -> b.bucket(bucket).prefix("auth/")).contents())
        .extracting(S3Object::key)
        .containsExactly("auth/f/a");
  }

  private static void put(String key, String content) {
    client.putObject(
        b -> b.bucket(bucket).key(key), RequestBody.fromString(content, StandardCharsets.UTF_8));
  }

  private static byte[] randomBytes(int size, long seed) {
    byte[] bytes = new byte[size];
    new Random(seed).nextBytes(bytes);
    return bytes;
  }
}
