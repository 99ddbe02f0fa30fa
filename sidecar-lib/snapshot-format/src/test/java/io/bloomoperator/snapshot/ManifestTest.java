package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class ManifestTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private static Manifest sample() throws Exception {
    BloomFilterBits.Builder builder =
        BloomFilterBits.builder(KeyType.LONG, BloomFilterSizing.forKeys(3000, 0.01));
    for (long i = 0; i < 3000; i++) {
      builder.putLong(i);
    }
    BloomFilterBits bits = builder.build();
    SnapshotEncoder.Result result = SnapshotEncoder.encode(bits, 1024, (i, d, l, s) -> {});
    return Manifest.of(
        "payments", 17, bits, 3000, result, Instant.parse("2025-06-01T10:15:30.987Z"));
  }

  @Test
  void publicationsAreOrderedByCreationTimeThenVersion() throws Exception {
    Manifest v17 = at(sample(), 17, "2025-06-01T10:15:30Z");
    assertThat(v17.created()).isEqualTo(Instant.parse("2025-06-01T10:15:30Z"));
    assertThat(sample().created()).isEqualTo(Instant.parse("2025-06-01T10:15:30.987Z"));
    assertThat(at(v17, 1, "2025-06-01T10:15:30.001Z").publishedAfter(v17))
        .as("a re-created filter's v1 a millisecond later")
        .isTrue();
    assertThat(at(v17, 18, "2025-06-01T10:15:30Z").publishedAfter(v17)).isTrue();
    assertThat(at(v17, 17, "2025-06-01T10:15:30Z").publishedAfter(v17)).as("itself").isFalse();
    assertThat(at(v17, 16, "2025-06-01T10:15:30Z").publishedAfter(v17)).isFalse();
    // A re-created filter starts again at 1, later.
    assertThat(at(v17, 1, "2025-06-01T10:15:31Z").publishedAfter(v17)).isTrue();
    // A higher version created earlier is an older incarnation's, replayed.
    assertThat(at(v17, 40, "2025-06-01T10:15:29Z").publishedAfter(v17)).isFalse();
    assertThat(at(v17, 40, "2025-06-01T12:15:29+02:00").publishedAfter(v17))
        .as("offsets are compared as instants")
        .isFalse();
  }

  private static Manifest at(Manifest m, long version, String createdAt) {
    return ManifestCopy.of(m).version(version).createdAt(createdAt).build();
  }

  @Test
  void ofDescribesTheEncodedSnapshot() throws Exception {
    Manifest m = sample();
    assertThat(m.format()).isEqualTo("guava-bloomfilter-v1");
    assertThat(m.keyType()).isEqualTo(KeyType.LONG);
    assertThat(m.createdAt()).isEqualTo("2025-06-01T10:15:30.987Z");
    assertThat(m.chunks()).hasSize((int) ((m.totalBytes() + 1023) / 1024));
    assertThat(m.chunks().get(0).name()).isEqualTo("payments-bloom-v17-0");
    assertThat(m.chunks().get(0).bytes()).isEqualTo(1024);
    assertThat(m.expectedFpp()).isBetween(0.0, 0.01);
    m.validate();
  }

  @Test
  void messagesQuotingManifestFieldsCannotForgeLogLinesOrGrowUnbounded() throws Exception {
    // Whoever may write ConfigMaps chooses these values; readers log and report the messages.
    ObjectNode node = (ObjectNode) JSON.readTree(sample().toJson());
    node.put("format", "x\nERROR forged log line\r\n" + "A".repeat(100_000));
    assertThatThrownBy(() -> Manifest.fromJson(node.toString()))
        .isInstanceOf(SnapshotVerificationException.class)
        .satisfies(
            e -> {
              String message = e.getMessage();
              assertThat(message).contains("x?ERROR forged log line??");
              assertThat(message).doesNotContain("\n").doesNotContain("\r");
              assertThat(message.length())
                  .isLessThanOrEqualTo(SnapshotVerificationException.MAX_MESSAGE_CHARS + 16);
            });
  }

  @Test
  void jsonRoundTrip() throws Exception {
    Manifest m = sample();
    String json = m.toJson();
    assertThat(JSON.readTree(json).get("keyType").asText()).isEqualTo("Long");
    assertThat(JSON.readTree(json).get("chunks").get(1).get("name").asText())
        .isEqualTo("payments-bloom-v17-1");
    assertThat(Manifest.fromJson(json)).isEqualTo(m);
  }

  @Test
  void theStoreIsOptionalSignedJsonAndOnlyAName() throws Exception {
    Manifest m = sample();
    assertThat(JSON.readTree(m.toJson()).has("store")).isFalse();
    Manifest stored = m.inStore("primary");
    assertThat(stored.inObjectStore()).isTrue();
    assertThat(JSON.readTree(stored.toJson()).get("store").asText()).isEqualTo("primary");
    assertThat(Manifest.fromJson(stored.toJson())).isEqualTo(stored);
    assertThat(stored.withCreatedAt(Instant.parse("2026-01-01T00:00:00Z")).store())
        .isEqualTo("primary");

    ObjectNode tree = (ObjectNode) JSON.readTree(m.toJson());
    tree.put("store", "https://evil.example/bucket");
    assertThatThrownBy(() -> Manifest.fromJson(tree.toString()))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("store must be a DNS label")
        .hasMessageNotContaining("evil");
    tree.putObject("store").put("endpoint", "x");
    assertThatThrownBy(() -> Manifest.fromJson(tree.toString()))
        .isInstanceOf(SnapshotVerificationException.class);
  }

  @Test
  void unknownFieldsAreIgnored() throws Exception {
    Manifest m = sample();
    ObjectNode tree = (ObjectNode) JSON.readTree(m.toJson());
    tree.put("compression", "none");
    tree.putObject("future").put("x", 1);
    ((ObjectNode) tree.get("chunks").get(0)).put("etag", "abc");
    assertThat(Manifest.fromJson(tree.toString())).isEqualTo(m);
  }

  @Test
  void missingOrNullRequiredFieldsAreRejectedByName() throws Exception {
    for (String field :
        new String[] {
          "format",
          "version",
          "filterName",
          "keyType",
          "numBits",
          "numHashFunctions",
          "keyCount",
          "expectedFpp",
          "totalBytes",
          "sha256",
          "createdAt",
          "chunks"
        }) {
      ObjectNode missing = (ObjectNode) JSON.readTree(sample().toJson());
      missing.remove(field);
      assertThatThrownBy(() -> Manifest.fromJson(missing.toString()))
          .as(field)
          .isInstanceOf(SnapshotVerificationException.class)
          .hasMessageContaining("'" + field + "'");

      ObjectNode nulled = (ObjectNode) JSON.readTree(sample().toJson());
      nulled.putNull(field);
      assertThatThrownBy(() -> Manifest.fromJson(nulled.toString()))
          .as(field)
          .isInstanceOf(SnapshotVerificationException.class)
          .hasMessageContaining(field);
    }
    ObjectNode chunkWithoutSha = (ObjectNode) JSON.readTree(sample().toJson());
    ((ObjectNode) chunkWithoutSha.get("chunks").get(0)).remove("sha256");
    assertThatThrownBy(() -> Manifest.fromJson(chunkWithoutSha.toString()))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("'sha256'");
  }

  @Test
  void inconsistentOrMalformedValuesAreRejected() throws Exception {
    assertRejected("format", "\"guava-bloomfilter-v2\"", "only understands 'guava-bloomfilter-v1'");
    assertRejected("keyType", "\"string\"", "unknown key type 'string'");
    assertRejected("numBits", "1000", "positive multiple of 64");
    assertRejected("numBits", "1.5", "numBits");
    assertRejected("numHashFunctions", "256", "numHashFunctions must be in 1..255");
    assertRejected("totalBytes", "12", "totalBytes is 12");
    assertRejected("sha256", "\"abc\"", "sha256 must be 64 hex digits");
    assertRejected("createdAt", "\"yesterday\"", "not an RFC 3339 timestamp");
    assertRejected("chunks", "[]", "chunks is missing or empty");
    assertRejected("expectedFpp", "2.0", "expectedFpp must be in [0, 1]");
    assertThatThrownBy(() -> Manifest.fromJson("{not json"))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("invalid manifest JSON");
    assertThatThrownBy(() -> Manifest.fromJson(""))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("empty");

    ObjectNode shortChunk = (ObjectNode) JSON.readTree(sample().toJson());
    ((ObjectNode) shortChunk.get("chunks").get(0)).put("bytes", 1000);
    assertThatThrownBy(() -> Manifest.fromJson(shortChunk.toString()))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("chunk sizes add up to");
  }

  @Test
  void manifestIsImmutable() throws Exception {
    Manifest m = sample();
    assertThatThrownBy(() -> m.chunks().clear()).isInstanceOf(UnsupportedOperationException.class);
  }

  private static void assertRejected(String field, String rawJsonValue, String message)
      throws Exception {
    ObjectNode tree = (ObjectNode) JSON.readTree(sample().toJson());
    tree.set(field, JSON.readTree(rawJsonValue));
    assertThatThrownBy(() -> Manifest.fromJson(tree.toString()))
        .as(field + "=" + rawJsonValue)
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining(message);
  }
}
