package io.bloomoperator.snapshot;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

/**
 * The manifest ConfigMap's {@code manifest.json}: which chunks make up a snapshot version and how
 * to check them. Readers trust nothing in a chunk until it matches this.
 *
 * @param format always {@link #FORMAT}; a reader refuses formats it does not know
 * @param version monotonically increasing snapshot version (part of the chunk names)
 * @param filterName name of the BloomFilter resource
 * @param keyType how keys are hashed
 * @param numBits bit count of the filter (a multiple of 64)
 * @param numHashFunctions k
 * @param keyCount number of keys put (duplicates included) when the snapshot was built
 * @param expectedFpp expected false-positive probability at {@code keyCount}
 * @param totalBytes size of the concatenated payload
 * @param sha256 lower-case hex SHA-256 of the concatenated payload
 * @param createdAt RFC 3339 timestamp, e.g. {@code 2025-01-31T12:00:00Z}
 * @param chunks the chunk ConfigMaps, in payload order
 */
@JsonPropertyOrder({
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
})
public record Manifest(
    @JsonProperty("format") String format,
    @JsonProperty("version") long version,
    @JsonProperty("filterName") String filterName,
    @JsonProperty("keyType") KeyType keyType,
    @JsonProperty("numBits") long numBits,
    @JsonProperty("numHashFunctions") int numHashFunctions,
    @JsonProperty("keyCount") long keyCount,
    @JsonProperty("expectedFpp") double expectedFpp,
    @JsonProperty("totalBytes") long totalBytes,
    @JsonProperty("sha256") String sha256,
    @JsonProperty("createdAt") String createdAt,
    @JsonProperty("chunks") List<ChunkRef> chunks) {

  /** The only format this code reads and writes: Guava's BloomFilter.writeTo payload, chunked. */
  public static final String FORMAT = "guava-bloomfilter-v1";

  // Strict about what is there, lenient about what is not ours: newer writers may add fields, but a
  // missing or null field, or a fraction where an integer belongs, is a broken manifest.
  private static final ObjectMapper MAPPER =
      JsonMapper.builder()
          .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .enable(DeserializationFeature.FAIL_ON_MISSING_CREATOR_PROPERTIES)
          .enable(DeserializationFeature.FAIL_ON_NULL_CREATOR_PROPERTIES)
          .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
          .build();

  /** One chunk ConfigMap: its name, payload byte count and lower-case hex SHA-256. */
  public record ChunkRef(
      @JsonProperty("name") String name,
      @JsonProperty("bytes") int bytes,
      @JsonProperty("sha256") String sha256) {}

  /** Copies {@code chunks} so the manifest cannot change under a reader. */
  public Manifest {
    chunks = chunks == null ? null : List.copyOf(chunks);
  }

  /**
   * Builds the manifest for a freshly encoded snapshot; chunk names come from {@link
   * SnapshotNames}.
   *
   * @param keyCount keys put into {@code bits}; also used for {@link #expectedFpp()}
   * @param createdAt creation time, written with second precision as Kubernetes does
   */
  public static Manifest of(
      String filterName,
      long version,
      BloomFilterBits bits,
      long keyCount,
      SnapshotEncoder.Result encoded,
      Instant createdAt) {
    List<ChunkRef> refs = new ArrayList<>(encoded.chunkCount());
    for (SnapshotEncoder.ChunkDigest chunk : encoded.chunks()) {
      refs.add(
          new ChunkRef(
              SnapshotNames.chunkName(filterName, version, chunk.index()),
              chunk.bytes(),
              chunk.sha256()));
    }
    return new Manifest(
        FORMAT,
        version,
        filterName,
        bits.keyType(),
        bits.numBits(),
        bits.numHashFunctions(),
        keyCount,
        BloomFilterSizing.expectedFpp(bits.numBits(), bits.numHashFunctions(), keyCount),
        encoded.totalBytes(),
        encoded.sha256(),
        DateTimeFormatter.ISO_INSTANT.format(createdAt.truncatedTo(ChronoUnit.SECONDS)),
        refs);
  }

  /** Number of 64-bit words ({@code numBits / 64}). */
  public int numLongs() {
    return (int) (numBits / Long.SIZE);
  }

  /** Pretty-printed JSON for the manifest ConfigMap. */
  public String toJson() {
    try {
      return MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(this);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot serialise manifest", e);
    }
  }

  /**
   * Parses and {@linkplain #validate() validates} a manifest; unknown fields are ignored.
   *
   * @throws SnapshotVerificationException if the JSON is malformed, a field is missing or null, or
   *     the values are inconsistent
   */
  public static Manifest fromJson(String json) throws SnapshotVerificationException {
    if (json == null || json.isBlank()) {
      throw new SnapshotVerificationException("manifest is empty");
    }
    Manifest manifest;
    try {
      manifest = MAPPER.readValue(json, Manifest.class);
    } catch (JsonMappingException e) {
      // Name the field: Jackson's own message often only names the Java type.
      throw new SnapshotVerificationException(
          "invalid manifest JSON at '" + path(e) + "': " + e.getOriginalMessage(), e);
    } catch (JsonProcessingException e) {
      throw new SnapshotVerificationException(
          "invalid manifest JSON: " + e.getOriginalMessage(), e);
    }
    if (manifest == null) {
      throw new SnapshotVerificationException("manifest is JSON null");
    }
    manifest.validate();
    return manifest;
  }

  /**
   * Checks every field and their consistency (payload size = 6 + numBits / 8 = sum of chunk sizes).
   *
   * @throws SnapshotVerificationException naming the first field that is wrong
   */
  public void validate() throws SnapshotVerificationException {
    if (!FORMAT.equals(format)) {
      fail("format is '" + format + "', this reader only understands '" + FORMAT + "'");
    }
    if (version < 0) {
      fail("version must be >= 0, got " + version);
    }
    if (filterName == null || filterName.isBlank()) {
      fail("filterName is missing");
    }
    if (keyType == null) {
      fail("keyType is missing");
    }
    if (numBits <= 0 || numBits % Long.SIZE != 0 || numBits > BloomFilterSizing.MAX_BITS) {
      fail(
          "numBits must be a positive multiple of 64 up to "
              + BloomFilterSizing.MAX_BITS
              + ", got "
              + numBits);
    }
    if (numHashFunctions < 1 || numHashFunctions > BloomFilterSizing.MAX_HASH_FUNCTIONS) {
      fail("numHashFunctions must be in 1..255, got " + numHashFunctions);
    }
    if (keyCount < 0) {
      fail("keyCount must be >= 0, got " + keyCount);
    }
    if (!(expectedFpp >= 0.0 && expectedFpp <= 1.0)) {
      fail("expectedFpp must be in [0, 1], got " + expectedFpp);
    }
    long expectedTotal = SnapshotEncoder.HEADER_BYTES + numBits / Byte.SIZE;
    if (totalBytes != expectedTotal) {
      fail("totalBytes is " + totalBytes + " but numBits " + numBits + " needs " + expectedTotal);
    }
    if (!Sha256.isHex64(sha256)) {
      fail("sha256 must be 64 hex digits, got '" + sha256 + "'");
    }
    if (createdAt == null) {
      fail("createdAt is missing");
    }
    try {
      OffsetDateTime.parse(createdAt, DateTimeFormatter.ISO_OFFSET_DATE_TIME);
    } catch (DateTimeParseException e) {
      fail("createdAt '" + createdAt + "' is not an RFC 3339 timestamp");
    }
    if (chunks == null || chunks.isEmpty()) {
      fail("chunks is missing or empty");
    }
    long sum = 0;
    for (int i = 0; i < chunks.size(); i++) {
      ChunkRef chunk = chunks.get(i);
      if (chunk == null) {
        fail("chunks[" + i + "] is null");
      }
      if (chunk.name() == null || chunk.name().isBlank()) {
        fail("chunks[" + i + "].name is missing");
      }
      if (chunk.bytes() < 1) {
        fail("chunks[" + i + "].bytes must be >= 1, got " + chunk.bytes());
      }
      if (!Sha256.isHex64(chunk.sha256())) {
        fail("chunks[" + i + "].sha256 must be 64 hex digits, got '" + chunk.sha256() + "'");
      }
      sum += chunk.bytes();
    }
    if (sum != totalBytes) {
      fail("chunk sizes add up to " + sum + " bytes but totalBytes is " + totalBytes);
    }
  }

  private static String path(JsonMappingException e) {
    StringBuilder path = new StringBuilder();
    for (JsonMappingException.Reference ref : e.getPath()) {
      if (ref.getFieldName() != null) {
        path.append(path.length() == 0 ? "" : ".").append(ref.getFieldName());
      } else if (ref.getIndex() >= 0) {
        path.append('[').append(ref.getIndex()).append(']');
      }
    }
    return path.length() == 0 ? "$" : path.toString();
  }

  private void fail(String problem) throws SnapshotVerificationException {
    throw new SnapshotVerificationException(
        "manifest of '" + filterName + "' v" + version + ": " + problem);
  }
}
