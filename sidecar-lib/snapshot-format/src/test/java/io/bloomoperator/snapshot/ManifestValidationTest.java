package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link Manifest#validate()} as a table: every field at its edges, the last accepted value and the
 * first refused one, and the message naming the field (what a reader's logs and listeners show).
 */
class ManifestValidationTest {

  private static final String FILTER = "ids";
  private static final String HEX = "ab".repeat(32);
  private static final Manifest WHOLE = whole();
  private static final Manifest CHAINED = chained();

  static Stream<Arguments> refused() {
    return Stream.of(
        row("unknown format", WHOLE, c -> c.format("guava-v9"), "format is 'guava-v9'"),
        row("negative version", WHOLE, c -> c.version(-1), "version must be in 1.."),
        row("version 0", WHOLE, c -> c.version(0), "version must be in 1..999999999999999999"),
        row("version 10^18", WHOLE, c -> c.version(SnapshotVersions.MAX + 1), "version must be"),
        row("version 2*10^18", WHOLE, c -> c.version(2_000_000_000_000_000_000L), "version must"),
        row("version Long.MAX", WHOLE, c -> c.version(Long.MAX_VALUE), "version must be in"),
        row("no filter name", WHOLE, c -> c.filterName(null), "filterName is missing"),
        row("blank filter name", WHOLE, c -> c.filterName(" "), "filterName is missing"),
        row("no key type", WHOLE, c -> c.keyType(null), "keyType is missing"),
        row("zero bits", WHOLE, c -> c.numBits(0), "numBits must be"),
        row("negative bits", WHOLE, c -> c.numBits(-64), "numBits must be"),
        row("bits not words", WHOLE, c -> c.numBits(WHOLE.numBits() + 1), "numBits must be"),
        row("too many bits", WHOLE, c -> c.numBits(BloomFilterSizing.MAX_BITS + 64), "numBits"),
        row("no hash function", WHOLE, c -> c.numHashFunctions(0), "numHashFunctions"),
        row("256 hash functions", WHOLE, c -> c.numHashFunctions(256), "numHashFunctions"),
        row("negative key count", WHOLE, c -> c.keyCount(-1), "keyCount must be >= 0"),
        row("negative fpp", WHOLE, c -> c.expectedFpp(-0.01), "expectedFpp"),
        row("fpp above 1", WHOLE, c -> c.expectedFpp(1.01), "expectedFpp"),
        row("fpp NaN", WHOLE, c -> c.expectedFpp(Double.NaN), "expectedFpp"),
        row("total off by one", WHOLE, c -> c.totalBytes(WHOLE.totalBytes() + 1), "totalBytes is"),
        row("sha256 too short", WHOLE, c -> c.sha256(HEX.substring(1)), "sha256 must be 64 hex"),
        row("sha256 not hex", WHOLE, c -> c.sha256("g" + HEX.substring(1)), "sha256 must be"),
        row("sha256 null", WHOLE, c -> c.sha256(null), "sha256 must be"),
        row("no createdAt", WHOLE, c -> c.createdAt((String) null), "createdAt is missing"),
        row("createdAt not a time", WHOLE, c -> c.createdAt("today"), "RFC 3339"),
        row("no chunks", WHOLE, c -> c.chunks(List.of()), "chunks is missing or empty"),
        row("null chunks", WHOLE, c -> c.chunks(null), "chunks is missing or empty"),
        row("nameless chunk", WHOLE, c -> c.chunks(chunk(1, " ", 0, HEX)), "chunks[1].name"),
        row("no chunk name", WHOLE, c -> c.chunks(chunk(1, null, 0, HEX)), "chunks[1].name"),
        row("empty chunk", WHOLE, c -> c.chunks(chunk(1, "x", -606, HEX)), "chunks[1].bytes"),
        row("chunk digest", WHOLE, c -> c.chunks(chunk(0, "x", 0, "00")), "chunks[0].sha256"),
        row("chunk sizes", WHOLE, c -> c.chunks(chunk(0, "x", 1, HEX)), "chunk sizes add up"),
        row("whole with chain", WHOLE, c -> c.chain(CHAINED.chain()), "has no chain"),
        // chains
        row("chain missing", CHAINED, c -> c.chain(null), "needs a chain"),
        row("base negative", CHAINED, c -> c.chain(base(-1, HEX)), "chain.baseVersion must be"),
        row("base version 0", CHAINED, c -> c.chain(base(0, HEX)), "chain.baseVersion must be"),
        row("base not older", CHAINED, c -> c.chain(base(2, HEX)), "chain.baseVersion must be"),
        row("base digest", CHAINED, c -> c.chain(base(1, "xyz")), "chain.baseSha256"),
        row("no deltas", CHAINED, c -> c.chain(deltas()), "chain.deltas is missing or empty"),
        row("null deltas", CHAINED, c -> c.chain(new Manifest.Chain(1, HEX, null)), "missing"),
        row(
            "delta not after base",
            CHAINED,
            c -> c.chain(deltas(delta(1, 5, CHAINED.sha256()))),
            "version must be above 1"),
        row(
            "delta flips negative",
            CHAINED,
            c -> c.chain(deltas(delta(2, -1, CHAINED.sha256()))),
            "changedBits"),
        row(
            "delta flips too many",
            CHAINED,
            c -> c.chain(deltas(delta(2, CHAINED.numBits() + 1, CHAINED.sha256()))),
            "changedBits"),
        row("delta digest", CHAINED, c -> c.chain(deltas(delta(2, 5, "nope"))), "deltas[0].sha256"),
        row(
            "delta chunk sizes",
            CHAINED,
            c -> c.chain(deltas(sized(last(), last().bytes() + 1))),
            "but bytes is"),
        row(
            "delta chunks missing",
            CHAINED,
            c -> c.chain(deltas(withChunks(last(), List.of()))),
            "deltas[0].chunks is missing"),
        row(
            "last delta another version",
            CHAINED,
            c -> c.chain(deltas(delta(3, 5, CHAINED.sha256()))).version(2),
            "the last delta must produce"),
        row(
            "last delta another digest",
            CHAINED,
            c -> c.chain(deltas(delta(2, 5, HEX))),
            "the last delta must produce"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("refused")
  void refuses(String row, Manifest valid, UnaryOperator<ManifestCopy> change, String message) {
    Manifest manifest = change.apply(ManifestCopy.of(valid)).build();
    assertThatThrownBy(manifest::validate)
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining(message);
  }

  static Stream<Arguments> accepted() {
    return Stream.of(
        row("as published", WHOLE, c -> c, ""),
        row("chain as published", CHAINED, c -> c, ""),
        row("version 1", WHOLE, c -> c.version(1), ""),
        row("version 10^18-1", WHOLE, c -> c.version(SnapshotVersions.MAX), ""),
        row("one hash function", WHOLE, c -> c.numHashFunctions(1), ""),
        row("255 hash functions", WHOLE, c -> c.numHashFunctions(255), ""),
        row("no keys", WHOLE, c -> c.keyCount(0), ""),
        row("fpp 0", WHOLE, c -> c.expectedFpp(0.0), ""),
        row("fpp 1", WHOLE, c -> c.expectedFpp(1.0), ""),
        row("upper-case digest", WHOLE, c -> c.sha256(WHOLE.sha256().toUpperCase()), ""),
        row("one-byte chunk", WHOLE, c -> c.chunks(split(WHOLE.chunks(), 1)), ""),
        row(
            "every bit flipped",
            CHAINED,
            c -> c.chain(deltas(delta(2, CHAINED.numBits(), CHAINED.sha256()))),
            ""),
        row(
            "no bit flipped",
            CHAINED,
            c -> c.chain(deltas(delta(2, 0, CHAINED.sha256().toUpperCase()))),
            ""));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("accepted")
  void accepts(String row, Manifest valid, UnaryOperator<ManifestCopy> change, String unused) {
    Manifest manifest = change.apply(ManifestCopy.of(valid)).build();
    assertThatCode(manifest::validate).doesNotThrowAnyException();
  }

  @Test
  void jsonErrorsNameTheField() throws Exception {
    // Compact, whatever the writer's layout: the edits below match exact text.
    String json =
        new com.fasterxml.jackson.databind.ObjectMapper().readTree(WHOLE.toJson()).toString();
    assertThatThrownBy(
            () -> Manifest.fromJson(json.replace("\"version\":1", "\"version\":\"one\"")))
        .hasMessageContaining("at 'version'");
    String secondChunk = "\"bytes\":" + WHOLE.chunks().get(1).bytes();
    assertThat(json).contains(secondChunk);
    assertThatThrownBy(
            () ->
                Manifest.fromJson(
                    json.replaceFirst(
                        "(\"chunks\":\\[\\{[^}]*\\},\\{[^}]*)\"bytes\":\\d+", "$1\"bytes\":\"x\"")))
        .hasMessageContaining("at 'chunks[1].bytes'");
    assertThatThrownBy(() -> Manifest.fromJson(json.replace("\"keyCount\"", "\"keys\"")))
        .hasMessageContaining("keyCount");
  }

  @Test
  void chainsParseLikeTheyArePublishedAndWholeManifestsHaveNone() throws Exception {
    assertThat(Manifest.fromJson(CHAINED.toJson())).isEqualTo(CHAINED);
    assertThat(Manifest.fromJson(WHOLE.toJson())).isEqualTo(WHOLE);
    assertThat(Manifest.fromJson(WHOLE.toJson()).chain()).isNull();
    assertThat(WHOLE.toJson()).doesNotContain("chain");
  }

  @Test
  void sizesOfWhatAManifestKeepsAndWhatItsVersionWrote() {
    assertThat(WHOLE.baseBytes()).isEqualTo(WHOLE.totalBytes());
    assertThat(WHOLE.versionBytes()).isEqualTo(WHOLE.totalBytes());
    assertThat(WHOLE.storedBytes()).isEqualTo(WHOLE.totalBytes());
    long delta = CHAINED.deltas().get(0).bytes();
    assertThat(CHAINED.versionBytes()).isEqualTo(delta);
    assertThat(CHAINED.storedBytes()).isEqualTo(CHAINED.totalBytes() + delta);
  }

  @Test
  void restampingChangesOnlyTheTime() {
    Instant later = Instant.parse("2030-01-02T03:04:05.678912Z");
    Manifest restamped = CHAINED.withCreatedAt(later);
    assertThat(restamped.createdAt()).isEqualTo("2030-01-02T03:04:05.678Z");
    assertThat(ManifestCopy.of(restamped).createdAt(CHAINED.createdAt()).build())
        .isEqualTo(CHAINED);
  }

  // ---------------------------------------------------------------- fixtures

  private static Arguments row(
      String name, Manifest valid, UnaryOperator<ManifestCopy> change, String message) {
    return Arguments.of(name, valid, change, message);
  }

  private static Manifest whole() {
    BloomFilterBits bits = whole1();
    try {
      SnapshotEncoder.Result encoded = SnapshotEncoder.encode(bits, 1_000, (i, d, l, s) -> {});
      Manifest m = Manifest.of(FILTER, 1, bits, 1, encoded, Instant.parse("2026-12-01T00:00:00Z"));
      assertThat(m.chunks()).hasSizeGreaterThan(1);
      return m;
    } catch (java.io.IOException e) {
      throw new AssertionError(e);
    }
  }

  private static Manifest chained() {
    BloomFilterBits.Builder next = BloomFilterBits.builder(KeyType.STRING, 64 * 200, 5);
    next.putString("b");
    BloomFilterBits v2 = next.build();
    SnapshotDelta.Result delta;
    try {
      delta = SnapshotDelta.encode(whole1(), v2, 1_000, (i, d, l, s) -> {});
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    return Manifest.withDelta(
        WHOLE, 2, v2, 1, SnapshotEncoder.sha256(v2), delta, Instant.parse("2026-12-01T00:01:00Z"));
  }

  private static BloomFilterBits whole1() {
    BloomFilterBits.Builder bits = BloomFilterBits.builder(KeyType.STRING, 64 * 200, 5);
    bits.putString("a");
    return bits.build();
  }

  private static Manifest.ChunkRef ref(String name, int bytes, String sha256) {
    return new Manifest.ChunkRef(name, bytes, sha256);
  }

  /**
   * WHOLE's chunks with chunk {@code index} renamed, resized by {@code extraBytes}, re-digested.
   */
  private static List<Manifest.ChunkRef> chunk(
      int index, String name, int extraBytes, String sha256) {
    List<Manifest.ChunkRef> chunks = new ArrayList<>(WHOLE.chunks());
    chunks.set(index, ref(name, chunks.get(index).bytes() + extraBytes, sha256));
    return chunks;
  }

  /** {@code chunks} with a one-byte chunk split off the front of the first. */
  private static List<Manifest.ChunkRef> split(List<Manifest.ChunkRef> chunks, int first) {
    List<Manifest.ChunkRef> out = new ArrayList<>();
    Manifest.ChunkRef head = chunks.get(0);
    out.add(ref(head.name(), first, head.sha256()));
    out.add(ref(head.name() + "-rest", head.bytes() - first, head.sha256()));
    out.addAll(chunks.subList(1, chunks.size()));
    return out;
  }

  private static Manifest.Delta last() {
    return CHAINED.deltas().get(0);
  }

  private static Manifest.Chain base(long version, String sha256) {
    return new Manifest.Chain(version, sha256, CHAINED.deltas());
  }

  private static Manifest.Chain deltas(Manifest.Delta... deltas) {
    return new Manifest.Chain(1, CHAINED.chain().baseSha256(), java.util.Arrays.asList(deltas));
  }

  private static Manifest.Delta delta(long version, long changedBits, String sha256) {
    Manifest.Delta d = last();
    return new Manifest.Delta(version, d.bytes(), changedBits, sha256, d.chunks());
  }

  private static Manifest.Delta sized(Manifest.Delta d, long bytes) {
    return new Manifest.Delta(d.version(), bytes, d.changedBits(), d.sha256(), d.chunks());
  }

  private static Manifest.Delta withChunks(Manifest.Delta d, List<Manifest.ChunkRef> chunks) {
    return new Manifest.Delta(d.version(), d.bytes(), d.changedBits(), d.sha256(), chunks);
  }
}
