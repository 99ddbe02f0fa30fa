package io.bloomoperator.snapshot;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The manifest ConfigMap's {@code manifest.json}: which chunks make up a snapshot version and how
 * to check them. Readers trust nothing in a chunk until it matches this.
 *
 * <p>Two formats per layout ({@link FilterFormat}). {@link #FORMAT} (Guava layout) and {@link
 * #FORMAT_SPLIT_BLOCK}: {@code chunks} hold this version's whole payload. {@link #FORMAT_CHAIN} and
 * {@link #FORMAT_SPLIT_BLOCK_CHAIN}: {@code chunks} hold the payload of an earlier version, the
 * <em>base</em>, and {@link #chain()} lists the deltas that turn it into this version's payload;
 * {@code totalBytes} and {@code sha256} always describe this version's whole payload, so a reader
 * verifies what it ends up serving, however it got there.
 *
 * @param format {@link #FORMAT}, {@link #FORMAT_CHAIN}, {@link #FORMAT_SPLIT_BLOCK} or {@link
 *     #FORMAT_SPLIT_BLOCK_CHAIN}; a reader refuses formats it does not know, so a reader that
 *     predates a layout never misreads its bits
 * @param version monotonically increasing snapshot version (part of the chunk names), in {@link
 *     SnapshotVersions#MIN}..{@link SnapshotVersions#MAX}
 * @param filterName name of the BloomFilter resource
 * @param keyType how keys are hashed
 * @param numBits bit count of the filter (a multiple of 64; of 256 for split-block)
 * @param numHashFunctions k (8 for split-block)
 * @param keyCount number of keys put (duplicates included) when the snapshot was built
 * @param expectedFpp expected false-positive probability at {@code keyCount}
 * @param totalBytes size of the concatenated payload
 * @param sha256 lower-case hex SHA-256 of the concatenated payload
 * @param createdAt RFC 3339 timestamp, e.g. {@code 2025-01-31T12:00:00Z}
 * @param chunks the chunk ConfigMaps, in payload order (of the base, for a chain)
 * @param chain the base and deltas, only (and always) in the chain formats
 * @param store the name of the object store holding the chunks, or null when they are ConfigMaps
 *     next to the manifest. Only a name: a reader resolves it to an endpoint and bucket from its
 *     own configuration, never from the manifest, and finds each chunk under {@link
 *     StoreObjectKeys#key}
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
  "chunks",
  "chain",
  "store"
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
    @JsonProperty("chunks") List<ChunkRef> chunks,
    @JsonProperty("chain") @JsonInclude(JsonInclude.Include.NON_NULL) Chain chain,
    @JsonProperty("store") @JsonInclude(JsonInclude.Include.NON_NULL) String store) {

  /** A whole snapshot: Guava's BloomFilter.writeTo payload, chunked. */
  public static final String FORMAT = "guava-bloomfilter-v1";

  /** A base snapshot plus a chain of deltas (see {@link SnapshotDelta}). */
  public static final String FORMAT_CHAIN = "guava-bloomfilter-chain-v1";

  /**
   * A whole snapshot in the split-block layout: the payload is Parquet's split-block bitset ({@link
   * SplitBlockBits}), chunked. Readers that predate it refuse it as an unknown format.
   */
  public static final String FORMAT_SPLIT_BLOCK = "parquet-splitblock-v1";

  /** A split-block base snapshot plus a chain of deltas. */
  public static final String FORMAT_SPLIT_BLOCK_CHAIN = "parquet-splitblock-chain-v1";

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

  /**
   * Stands in for an absent {@code chain} while the manifest is bound, so that the mapper's
   * missing- and null-field checks stay strict for every required field; the chain is then parsed
   * on its own (just as strictly) or left out.
   */
  private static final JsonNode NO_CHAIN =
      MAPPER
          .createObjectNode()
          .put("baseVersion", 0)
          .put("baseSha256", "")
          .set("deltas", MAPPER.createArrayNode());

  /** One chunk ConfigMap: its name, payload byte count and lower-case hex SHA-256. */
  public record ChunkRef(
      @JsonProperty("name") String name,
      @JsonProperty("bytes") int bytes,
      @JsonProperty("sha256") String sha256) {}

  /**
   * The base and the deltas of a {@link #FORMAT_CHAIN} manifest.
   *
   * @param baseVersion the version whose whole payload {@code chunks} hold (their names carry it)
   * @param baseSha256 SHA-256 of that payload
   * @param deltas in order; applying all of them to the base gives this version's payload, and the
   *     last one is this version
   */
  @JsonPropertyOrder({"baseVersion", "baseSha256", "deltas"})
  public record Chain(
      @JsonProperty("baseVersion") long baseVersion,
      @JsonProperty("baseSha256") String baseSha256,
      @JsonProperty("deltas") List<Delta> deltas) {

    /** Copies {@code deltas} so the chain cannot change under a reader. */
    public Chain {
      deltas = deltas == null ? null : List.copyOf(deltas);
    }
  }

  /**
   * One delta of a chain: the bits that changed from the version before it to {@code version}.
   *
   * @param version the version this delta produces (its chunk names carry it)
   * @param bytes size of the delta's encoding, the sum of its chunks
   * @param changedBits how many bits it flips
   * @param sha256 SHA-256 of the whole payload of {@code version}, i.e. after applying it
   * @param chunks the delta's chunk ConfigMaps, in order
   */
  @JsonPropertyOrder({"version", "bytes", "changedBits", "sha256", "chunks"})
  public record Delta(
      @JsonProperty("version") long version,
      @JsonProperty("bytes") long bytes,
      @JsonProperty("changedBits") long changedBits,
      @JsonProperty("sha256") String sha256,
      @JsonProperty("chunks") List<ChunkRef> chunks) {

    /** Copies {@code chunks} so the delta cannot change under a reader. */
    public Delta {
      chunks = chunks == null ? null : List.copyOf(chunks);
    }
  }

  /** Copies {@code chunks} so the manifest cannot change under a reader. */
  @JsonCreator
  public Manifest {
    chunks = chunks == null ? null : List.copyOf(chunks);
  }

  /** A manifest whose chunks are ConfigMaps next to it (no {@link #store()}). */
  public Manifest(
      String format,
      long version,
      String filterName,
      KeyType keyType,
      long numBits,
      int numHashFunctions,
      long keyCount,
      double expectedFpp,
      long totalBytes,
      String sha256,
      String createdAt,
      List<ChunkRef> chunks,
      Chain chain) {
    this(
        format,
        version,
        filterName,
        keyType,
        numBits,
        numHashFunctions,
        keyCount,
        expectedFpp,
        totalBytes,
        sha256,
        createdAt,
        chunks,
        chain,
        null);
  }

  /** A manifest of a whole snapshot ({@link #FORMAT}, no chain). */
  public Manifest(
      String format,
      long version,
      String filterName,
      KeyType keyType,
      long numBits,
      int numHashFunctions,
      long keyCount,
      double expectedFpp,
      long totalBytes,
      String sha256,
      String createdAt,
      List<ChunkRef> chunks) {
    this(
        format,
        version,
        filterName,
        keyType,
        numBits,
        numHashFunctions,
        keyCount,
        expectedFpp,
        totalBytes,
        sha256,
        createdAt,
        chunks,
        null);
  }

  /**
   * Builds the manifest for a freshly encoded snapshot; chunk names come from {@link
   * SnapshotNames}.
   *
   * @param keyCount keys put into {@code bits}; also used for {@link #expectedFpp()}
   * @param createdAt creation time, written with millisecond precision: it orders publications (see
   *     {@link #publishedAfter}), also of a filter deleted and re-created within a second
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
        bits.format().manifestFormat(),
        version,
        filterName,
        bits.keyType(),
        bits.numBits(),
        bits.numHashFunctions(),
        keyCount,
        expectedFpp(bits, keyCount),
        encoded.totalBytes(),
        encoded.sha256(),
        DateTimeFormatter.ISO_INSTANT.format(createdAt.truncatedTo(ChronoUnit.MILLIS)),
        refs);
  }

  /**
   * The manifest of {@code version} published as a delta on top of what {@code previous} (a
   * {@linkplain #validate() valid} manifest of the same geometry) publishes: the same base, the
   * previous deltas, then {@code delta}.
   *
   * @param bits the new version's filter (for the geometry, key count and fpp fields)
   * @param payloadSha256 SHA-256 of the new version's whole payload
   * @param delta the encoded delta from {@code previous}'s payload to the new one
   */
  public static Manifest withDelta(
      Manifest previous,
      long version,
      BloomFilterBits bits,
      long keyCount,
      String payloadSha256,
      SnapshotDelta.Result delta,
      Instant createdAt) {
    if (!previous.describes(bits)) {
      throw new IllegalArgumentException("a delta needs the previous version's geometry");
    }
    List<ChunkRef> refs = new ArrayList<>(delta.chunks().size());
    for (SnapshotEncoder.ChunkDigest chunk : delta.chunks()) {
      refs.add(
          new ChunkRef(
              SnapshotNames.deltaChunkName(previous.filterName(), version, chunk.index()),
              chunk.bytes(),
              chunk.sha256()));
    }
    List<Delta> deltas = new ArrayList<>(previous.deltas());
    deltas.add(new Delta(version, delta.totalBytes(), delta.changedBits(), payloadSha256, refs));
    return new Manifest(
        bits.format().chainManifestFormat(),
        version,
        previous.filterName(),
        bits.keyType(),
        bits.numBits(),
        bits.numHashFunctions(),
        keyCount,
        expectedFpp(bits, keyCount),
        bits.format().payloadBytes(bits.numBits()),
        payloadSha256,
        DateTimeFormatter.ISO_INSTANT.format(createdAt.truncatedTo(ChronoUnit.MILLIS)),
        previous.chunks(),
        new Chain(previous.baseVersion(), previous.baseSha256(), deltas),
        // A delta extends the chain where its chunks are: the base's chunks stay in that store.
        previous.store());
  }

  /** The false-positive rate the layout of {@code bits} is expected to have at keyCount keys. */
  private static double expectedFpp(BloomFilterBits bits, long keyCount) {
    if (bits.format() == FilterFormat.SPLIT_BLOCK) {
      long blocks = bits.numBits() / (SplitBlockSizing.BYTES_PER_BLOCK * Byte.SIZE);
      return Math.min(1.0, SplitBlockSizing.fppAt((double) keyCount / blocks));
    }
    return BloomFilterSizing.expectedFpp(bits.numBits(), bits.numHashFunctions(), keyCount);
  }

  /**
   * The layout of the bits, from the format id ({@link FilterFormat#GUAVA} for an id this reader
   * does not know; {@link #validate()} refuses those).
   */
  public FilterFormat filterFormat() {
    FilterFormat layout = FilterFormat.ofManifestFormat(format);
    return layout == null ? FilterFormat.GUAVA : layout;
  }

  /**
   * This manifest with {@code createdAt} (millisecond precision) and everything else unchanged: the
   * same version re-stamped, so that readers with a maximum manifest age keep accepting a version
   * that has not changed for a long time. Readers serving it see the same version and digest and
   * load nothing.
   */
  public Manifest withCreatedAt(Instant createdAt) {
    return copy(
        DateTimeFormatter.ISO_INSTANT.format(createdAt.truncatedTo(ChronoUnit.MILLIS)),
        chain,
        store);
  }

  /**
   * This manifest with its chunks in the object store named {@code store} (null: ConfigMaps), and
   * everything else unchanged.
   */
  public Manifest inStore(String store) {
    return copy(createdAt, chain, store);
  }

  /** This manifest with another {@code createdAt} text, chain and store. */
  private Manifest copy(String createdAt, Chain chain, String store) {
    return new Manifest(
        format,
        version,
        filterName,
        keyType,
        numBits,
        numHashFunctions,
        keyCount,
        expectedFpp,
        totalBytes,
        sha256,
        createdAt,
        chunks,
        chain,
        store);
  }

  /**
   * Whether {@code bits} has this manifest's key type, layout and geometry (numBits, k): the
   * condition for a delta between the two.
   */
  public boolean describes(BloomFilterBits bits) {
    return keyType == bits.keyType()
        && filterFormat() == bits.format()
        && numBits == bits.numBits()
        && numHashFunctions == bits.numHashFunctions();
  }

  /**
   * {@link #createdAt()} as an instant. The operator never publishes a version created before the
   * one it replaces, so together with the version this orders all publications of a filter, also
   * across a delete and re-create (which restarts versions at 1).
   *
   * @throws java.time.format.DateTimeParseException if createdAt is not RFC 3339 (a {@linkplain
   *     #validate() valid} manifest's always is)
   */
  public Instant created() {
    return OffsetDateTime.parse(createdAt, DateTimeFormatter.ISO_OFFSET_DATE_TIME).toInstant();
  }

  /**
   * Whether this manifest was published after {@code other}: created later, or created at the same
   * instant with a higher version (manifests of older operators carry whole seconds). Readers that
   * trust signatures load only such manifests, which refuses a replayed older one without refusing
   * a re-created filter's version 1.
   */
  public boolean publishedAfter(Manifest other) {
    int byTime = created().compareTo(other.created());
    return byTime > 0 || (byTime == 0 && version > other.version());
  }

  /** Whether the chunks live in an object store ({@link #store()}) rather than in ConfigMaps. */
  public boolean inObjectStore() {
    return store != null;
  }

  /** Whether this is a chain manifest (a base plus deltas). */
  public boolean chained() {
    return chain != null;
  }

  /** The version whose whole payload {@link #chunks()} hold: this one unless chained. */
  public long baseVersion() {
    return chain == null ? version : chain.baseVersion();
  }

  /** SHA-256 of the payload {@link #chunks()} hold: {@link #sha256()} unless chained. */
  public String baseSha256() {
    return chain == null ? sha256 : chain.baseSha256();
  }

  /** The deltas after the base, in order; empty unless chained. */
  public List<Delta> deltas() {
    return chain == null ? List.of() : chain.deltas();
  }

  /** Bytes of the base's chunks: {@link #totalBytes()}, the whole payload of the base. */
  public long baseBytes() {
    return totalBytes;
  }

  /** Bytes of all delta chunks. */
  public long deltaBytes() {
    long sum = 0;
    for (Delta delta : deltas()) {
      sum += delta.bytes();
    }
    return sum;
  }

  /**
   * Bytes of this version's own chunks, i.e. what publishing it wrote: its delta when chained, the
   * whole payload otherwise.
   */
  public long versionBytes() {
    List<Delta> deltas = deltas();
    return deltas.isEmpty() ? totalBytes : deltas.get(deltas.size() - 1).bytes();
  }

  /** Bytes of every chunk this manifest names: what it keeps in the API server. */
  public long storedBytes() {
    return baseBytes() + deltaBytes();
  }

  /** Number of chunks this manifest names, base and deltas. */
  public int chunkCount() {
    int count = chunks == null ? 0 : chunks.size();
    for (Delta delta : deltas()) {
      count += delta.chunks() == null ? 0 : delta.chunks().size();
    }
    return count;
  }

  /** Every version whose chunks this manifest names: the base and each delta. */
  public List<Long> referencedVersions() {
    List<Long> versions = new ArrayList<>();
    versions.add(baseVersion());
    for (Delta delta : deltas()) {
      versions.add(delta.version());
    }
    return versions;
  }

  /**
   * The deltas that take a reader holding the snapshot {@code heldVersion} with payload digest
   * {@code heldSha256} to this version: all of them if it holds the base, those after it if it
   * holds an intermediate version, none if it holds this version. Empty when the held snapshot is
   * not in this chain (the reader must load the base).
   */
  public Optional<List<Delta>> deltasAfter(long heldVersion, String heldSha256) {
    if (heldSha256 == null) {
      return Optional.empty();
    }
    if (heldVersion == version && heldSha256.equalsIgnoreCase(sha256)) {
      return Optional.of(List.of());
    }
    List<Delta> deltas = deltas();
    if (chain == null) {
      return Optional.empty();
    }
    if (heldVersion == chain.baseVersion() && heldSha256.equalsIgnoreCase(chain.baseSha256())) {
      return Optional.of(deltas);
    }
    for (int i = 0; i < deltas.size(); i++) {
      Delta delta = deltas.get(i);
      if (delta.version() == heldVersion && delta.sha256().equalsIgnoreCase(heldSha256)) {
        return Optional.of(deltas.subList(i + 1, deltas.size()));
      }
    }
    return Optional.empty();
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
      JsonNode tree = MAPPER.readTree(json);
      if (tree == null || tree.isNull()) {
        throw new SnapshotVerificationException("manifest is JSON null");
      }
      if (!tree.isObject()) {
        throw new SnapshotVerificationException("manifest is not a JSON object");
      }
      // "chain" and "store" are the optional fields: split them off so that everything else stays
      // strictly required, and parse them just as strictly when present.
      ObjectNode fields = ((ObjectNode) tree).deepCopy();
      JsonNode chainNode = fields.replace("chain", NO_CHAIN);
      JsonNode storeNode = fields.replace("store", TextNode.valueOf(""));
      Manifest core = MAPPER.treeToValue(fields, Manifest.class);
      Chain chain =
          chainNode == null || chainNode.isNull()
              ? null
              : MAPPER.treeToValue(chainNode, Chain.class);
      if (storeNode != null && !storeNode.isNull() && !storeNode.isTextual()) {
        throw new SnapshotVerificationException("invalid manifest JSON at 'store': not a string");
      }
      String store = storeNode == null || storeNode.isNull() ? null : storeNode.textValue();
      manifest = core == null ? null : core.copy(core.createdAt, chain, store);
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
   * Checks every field and their consistency (payload size = the layout's header + numBits / 8 =
   * sum of chunk sizes).
   *
   * @throws SnapshotVerificationException naming the first field that is wrong
   */
  public void validate() throws SnapshotVerificationException {
    FilterFormat layout = FilterFormat.ofManifestFormat(format);
    if (layout == null) {
      fail(
          "format is '"
              + format
              + "', this reader only understands '"
              + FORMAT
              + "', '"
              + FORMAT_CHAIN
              + "', '"
              + FORMAT_SPLIT_BLOCK
              + "' and '"
              + FORMAT_SPLIT_BLOCK_CHAIN
              + "'");
    }
    boolean chainFormat = FilterFormat.isChainFormat(format);
    if (!SnapshotVersions.valid(version)) {
      fail(
          "version must be in "
              + SnapshotVersions.MIN
              + ".."
              + SnapshotVersions.MAX
              + ", got "
              + version);
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
    long blockBits = SplitBlockSizing.BYTES_PER_BLOCK * Byte.SIZE;
    if (layout == FilterFormat.SPLIT_BLOCK
        && (numHashFunctions != FilterFormat.SPLIT_BLOCK_BITS_PER_KEY
            || numBits % blockBits != 0
            || numBits / blockBits > SplitBlockSizing.MAX_BLOCKS)) {
      fail(
          "a split-block filter has numHashFunctions 8 and whole 256-bit blocks (at most "
              + SplitBlockSizing.MAX_BLOCKS
              + "), got "
              + numHashFunctions
              + " and numBits "
              + numBits);
    }
    if (keyCount < 0) {
      fail("keyCount must be >= 0, got " + keyCount);
    }
    if (!(expectedFpp >= 0.0 && expectedFpp <= 1.0)) {
      fail("expectedFpp must be in [0, 1], got " + expectedFpp);
    }
    long expectedTotal = layout.payloadBytes(numBits);
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
    long sum = validateChunks("chunks", chunks);
    if (sum != totalBytes) {
      fail("chunk sizes add up to " + sum + " bytes but totalBytes is " + totalBytes);
    }
    if (store != null && !StoreObjectKeys.isStoreName(store)) {
      fail("store must be a DNS label (at most 63 characters of a-z, 0-9 and '-')");
    }
    if (!chainFormat && chain != null) {
      fail("format '" + format + "' has no chain");
    }
    if (chainFormat) {
      validateChain();
    }
  }

  private void validateChain() throws SnapshotVerificationException {
    if (chain == null) {
      fail("format '" + format + "' needs a chain");
    }
    if (chain.baseVersion() < SnapshotVersions.MIN || chain.baseVersion() >= version) {
      fail(
          "chain.baseVersion must be in "
              + SnapshotVersions.MIN
              + ".."
              + (version - 1)
              + ", got "
              + chain.baseVersion());
    }
    if (!Sha256.isHex64(chain.baseSha256())) {
      fail("chain.baseSha256 must be 64 hex digits, got '" + chain.baseSha256() + "'");
    }
    List<Delta> deltas = chain.deltas();
    if (deltas == null || deltas.isEmpty()) {
      fail("chain.deltas is missing or empty");
    }
    long previous = chain.baseVersion();
    for (int i = 0; i < deltas.size(); i++) {
      String where = "chain.deltas[" + i + "]";
      Delta delta = deltas.get(i);
      if (delta == null) {
        fail(where + " is null");
      }
      if (delta.version() <= previous) {
        fail(where + ".version must be above " + previous + ", got " + delta.version());
      }
      previous = delta.version();
      if (delta.changedBits() < 0 || delta.changedBits() > numBits) {
        fail(where + ".changedBits must be in 0.." + numBits + ", got " + delta.changedBits());
      }
      if (!Sha256.isHex64(delta.sha256())) {
        fail(where + ".sha256 must be 64 hex digits, got '" + delta.sha256() + "'");
      }
      long sum = validateChunks(where + ".chunks", delta.chunks());
      if (sum != delta.bytes()) {
        fail(where + ": chunk sizes add up to " + sum + " bytes but bytes is " + delta.bytes());
      }
    }
    Delta last = deltas.get(deltas.size() - 1);
    if (last.version() != version || !last.sha256().equalsIgnoreCase(sha256)) {
      fail("the last delta must produce this version (v" + version + ", sha256 " + sha256 + ")");
    }
  }

  private long validateChunks(String field, List<ChunkRef> refs)
      throws SnapshotVerificationException {
    if (refs == null || refs.isEmpty()) {
      fail(field + " is missing or empty");
    }
    long sum = 0;
    for (int i = 0; i < refs.size(); i++) {
      ChunkRef chunk = refs.get(i);
      String where = field + "[" + i + "]";
      if (chunk == null) {
        fail(where + " is null");
      }
      if (chunk.name() == null || chunk.name().isBlank()) {
        fail(where + ".name is missing");
      }
      if (chunk.bytes() < 1) {
        fail(where + ".bytes must be >= 1, got " + chunk.bytes());
      }
      if (!Sha256.isHex64(chunk.sha256())) {
        fail(where + ".sha256 must be 64 hex digits, got '" + chunk.sha256() + "'");
      }
      sum += chunk.bytes();
    }
    return sum;
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
