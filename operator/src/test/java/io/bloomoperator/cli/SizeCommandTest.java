package io.bloomoperator.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.publish.DeltaPolicy;
import io.bloomoperator.publish.WriteBudget;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotDelta;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotLimits;
import io.bloomoperator.source.KeySink;
import io.bloomoperator.source.KeySource;
import io.bloomoperator.source.SourceException;
import java.nio.ByteBuffer;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code size} reports what the operator and the readers really do: its figures are checked against
 * a filter built by the operator's builder, encoded into chunks and diffed into a delta.
 */
class SizeCommandTest {

  private static final String NAME = "product-ids";

  @ParameterizedTest(name = "{0} keys at {1}, {2}, chunks of {3}")
  @CsvSource({
    "50000, 0.01, Guava, 4096",
    "50000, 0.001, SplitBlock, 4096",
    "3000, 0.01, Guava, 1000000",
    "1, 0.5, SplitBlock, 1024"
  })
  void figuresAreThoseOfARealBuildAndEncoding(long keys, double fpp, String layout, int chunkSize)
      throws Exception {
    FilterFormat format = FilterFormat.fromCrdName(layout);
    SizeEstimate estimate = estimate(keys, fpp, format, chunkSize, keys / 100);
    BloomFilterBits bits = build(format, keys, fpp, 0, keys);

    assertThat(estimate.geometry().numBits()).isEqualTo(bits.numBits());
    assertThat(estimate.geometry().numHashFunctions()).isEqualTo(bits.numHashFunctions());
    assertThat(estimate.geometry().payloadBytes()).isEqualTo(SnapshotEncoder.payloadSize(bits));

    SnapshotEncoder.Result encoded =
        SnapshotEncoder.encode(bits, estimate.transport().chunkSize(), (i, b, o, l) -> {});
    assertThat(estimate.transport().chunks()).isEqualTo(encoded.chunkCount());
    assertThat(estimate.transport().objectStoreBytes()).isEqualTo(encoded.totalBytes());

    Manifest manifest = Manifest.of(NAME, 1, bits, keys, encoded, Instant.now());
    assertThat(estimate.geometry().expectedFpp()).isEqualTo(manifest.expectedFpp());
    // createdAt loses its ".SSS" when the milliseconds are 0: at most 4 characters apart.
    assertThat(estimate.transport().manifestEtcdBytes())
        .isCloseTo(WriteBudget.Limits.cost(manifest.toJson().length(), 1), within(4L));
    assertThat(estimate.transport().configMapEtcdBytes())
        .isCloseTo(
            WriteBudget.Limits.cost(encoded.totalBytes(), encoded.chunkCount() + 1L)
                + estimate.transport().manifestEtcdBytes(),
            within(0L));
  }

  @Test
  void aChunkSizeBelowTheWriteBudgetsIsRaisedAsTheOperatorRaisesIt() throws Exception {
    SizeEstimate estimate = estimate(2_000_000, 0.01, FilterFormat.GUAVA, 1024, 0);
    BloomFilterBits bits = build(FilterFormat.GUAVA, 2_000_000, 0.01, 0, 0);
    assertThat(estimate.transport().chunkSize()).isGreaterThan(1024);
    assertThat(estimate.transport().chunks())
        .isEqualTo(SnapshotEncoder.chunkCount(bits, estimate.transport().chunkSize()))
        .isLessThanOrEqualTo(WriteBudget.Limits.DEFAULT_MAX_CHUNKS_PER_VERSION);
  }

  @ParameterizedTest(name = "{0}: {1} keys, {2} replaced")
  @CsvSource({"Guava, 40000, 400", "SplitBlock, 40000, 400", "Guava, 20000, 5000"})
  void aRealDeltaStaysWithinTheBound(String layout, long keys, long replaced) throws Exception {
    FilterFormat format = FilterFormat.fromCrdName(layout);
    // Replacing a key removes one and adds one: 2 changed keys.
    SizeEstimate estimate = estimate(keys, 0.01, format, 1_000_000, 2 * replaced);
    BloomFilterBits before = build(format, keys, 0.01, 0, keys);
    BloomFilterBits after = build(format, keys, 0.01, replaced, keys);

    SnapshotDelta.Result delta = SnapshotDelta.encode(before, after, 1_000_000, (i, b, o, l) -> {});
    assertThat(delta.changedBits()).isLessThanOrEqualTo(estimate.refresh().changedBitsBound());
    assertThat(delta.totalBytes()).isLessThanOrEqualTo(estimate.refresh().deltaBytesBound());
    long allowed = DeltaPolicy.defaults().maxDeltaBytes(SnapshotEncoder.payloadSize(after));
    if (estimate.refresh().publishedAs().equals("DELTA")) {
      assertThat(delta.totalBytes()).isLessThanOrEqualTo(allowed);
      assertThat(estimate.refresh().bytesPerReader())
          .isEqualTo(estimate.refresh().deltaBytesBound());
    } else {
      assertThat(estimate.refresh().bytesPerReader()).isEqualTo(SnapshotEncoder.payloadSize(after));
    }
  }

  /** The bound holds for the worst spacings too, not only for the hashing's random ones. */
  @ParameterizedTest(name = "{1} bits changed, every {2}th of {0}")
  @CsvSource({
    "65536, 512, 128", // gaps of 127: just within 1-byte varints
    "65536, 500, 129", // gaps of 128: just past them
    "1048576, 64, 16385", // gaps of 16384: just past 2-byte varints
    "65536, 65536, 1", // every bit
    "640, 1, 1"
  })
  void theDeltaBoundHoldsForAnySpacing(long numBits, int changed, int every) throws Exception {
    BloomFilterBits empty = guavaBits(numBits, 0, 1);
    BloomFilterBits spaced = guavaBits(numBits, changed, every);
    long size = SnapshotDelta.encodedSize(empty, spaced, Long.MAX_VALUE);
    assertThat(size).isLessThanOrEqualTo(SizeEstimate.deltaBytesBound(numBits, changed));
  }

  @Test
  void theXmxHintIsTheSmallestHeapWhoseDefaultReaderLimitAdmitsThePayload() {
    SizeEstimate estimate = estimate(1_000_000, 0.01, FilterFormat.GUAVA, 1_000_000, 0);
    SizeEstimate.Reader reader = estimate.reader();
    long payload = estimate.geometry().payloadBytes();
    assertThat(SnapshotLimits.forHeap(reader.xmxBytes()).maxTotalBytes())
        .isGreaterThanOrEqualTo(payload);
    assertThat(SnapshotLimits.forHeap(reader.xmxBytes() - (1 << 20)).maxTotalBytes())
        .isLessThan(payload);
    assertThat(reader.xmxBytes()).isGreaterThanOrEqualTo(reader.refreshPeakBytes());
  }

  @Test
  void jsonOutputParsesAndCarriesTheFigures() throws Exception {
    Cli.Run run =
        Cli.run("size", "--keys", "1000000", "--fpp", "0.01", "--pods", "3", "-o", "json");
    assertThat(run.exit()).as("%s", run).isZero();
    JsonNode json = new ObjectMapper().readTree(run.out());
    assertThat(json.at("/geometry/numBits").asLong())
        .isEqualTo(BloomFilterSizing.forKeys(1_000_000, 0.01).numBits());
    assertThat(json.at("/transport/fitsConfigMaps").asBoolean()).isTrue();
    assertThat(json.at("/refresh/churn").asLong()).as("1 % by default").isEqualTo(10_000);
    assertThat(json.at("/cluster/heapBytes").asLong())
        .isEqualTo(3 * json.at("/reader/refreshPeakBytes").asLong());
  }

  @Test
  void tableSaysWhenAnObjectStoreIsNeeded() {
    Cli.Run small = Cli.run("size", "--keys", "1000000", "--fpp", "0.01");
    assertThat(small.exit()).as("%s", small).isZero();
    assertThat(small.out()).contains("fit: within BLOOM_MAX_SNAPSHOT_BYTES", "-Xmx", "delta");
    Cli.Run large = Cli.run("size", "--keys", "100000000", "--fpp", "0.01");
    assertThat(large.exit()).as("%s", large).isZero();
    assertThat(large.out()).contains("too large", "spec.snapshot.store");
  }

  @Test
  void badInputIsAUsageErrorNamingTheOption() {
    assertUsageError("--keys", "--keys", "0", "--fpp", "0.01");
    assertUsageError("--keys", "--keys", "2000000001", "--fpp", "0.01");
    assertUsageError("--fpp", "--keys", "10", "--fpp", "0");
    assertUsageError("--fpp", "--keys", "10", "--fpp", "1");
    assertUsageError("--fpp", "--keys", "10", "--fpp", "1e-10");
    assertUsageError("--chunk-size", "--keys", "10", "--fpp", "0.01", "--chunk-size", "100");
    assertUsageError("--churn", "--keys", "10", "--fpp", "0.01", "--churn", "-1");
    assertUsageError("--pods", "--keys", "10", "--fpp", "0.01", "--pods", "0");
    assertUsageError("-o", "--keys", "10", "--fpp", "0.01", "-o", "yaml");
    assertUsageError("Guava or SplitBlock", "--keys", "10", "--fpp", "0.01", "--format", "guava");
    // Within the CRD's bounds, beyond what the layout can hold: the operator refuses it too.
    assertUsageError(
        "cannot build", "--keys", "2000000000", "--fpp", "1e-9", "--format", "SplitBlock");
  }

  @Test
  void warnsOfTheLimitsOfReadersAndConfigMapsBeyondTheSnapshotLimit() throws Exception {
    Cli.Run run = Cli.run("size", "--keys", "2000000000", "--fpp", "1e-9");
    assertThat(run.exit()).as("%s", run).isZero();
    assertThat(run.out()).contains("warning: ", "maxChunks", "more than a ConfigMap holds");
    JsonNode json =
        new ObjectMapper()
            .readTree(Cli.run("size", "--keys", "1000000", "--fpp", "0.01", "-o", "json").out());
    assertThat(json.get("warnings")).isEmpty();
  }

  @Test
  void helpPointsToTheSizingPage() {
    Cli.Run help = Cli.run("size", "--help");
    assertThat(help.exit()).isZero();
    assertThat(help.out()).contains("docs/sizing.md", "--churn", "--pods", "-o");
  }

  private static void assertUsageError(String mentions, String... args) {
    String[] command = new String[args.length + 1];
    command[0] = "size";
    System.arraycopy(args, 0, command, 1, args.length);
    Cli.Run run = Cli.run(command);
    assertThat(run.exit()).as("%s", run).isEqualTo(BloomCli.EXIT_USAGE);
    assertThat(run.err()).as("%s", run).contains(mentions);
  }

  private static SizeEstimate estimate(
      long keys, double fpp, FilterFormat format, int chunkSize, long churn) {
    return SizeEstimate.of(
        new SizeEstimate.Input(keys, fpp, format, KeyType.STRING, chunkSize, churn, 1, NAME));
  }

  /** Keys {@code key-from .. key-(from + count - 1)}, built as the operator builds them. */
  private static BloomFilterBits build(
      FilterFormat format, long declared, double fpp, long from, long count) throws Exception {
    KeySource source =
        new KeySource() {
          @Override
          public String description() {
            return "keys from " + from;
          }

          @Override
          public String changeToken() {
            return null;
          }

          @Override
          public void readKeys(KeySink sink) throws SourceException {
            for (long i = from; i < from + count; i++) {
              sink.line("key-" + i);
            }
          }
        };
    return new FilterBuilder()
        .build(
            source,
            new FilterBuilder.Request(
                KeyType.STRING, fpp, Math.max(1, declared), 0, Long.MAX_VALUE, null, format))
        .bits();
  }

  /** A Guava-layout filter with bits 0, every, 2 × every, … set ({@code count} of them). */
  private static BloomFilterBits guavaBits(long numBits, int count, int every) throws Exception {
    int numLongs = (int) (numBits / Long.SIZE);
    long[] words = new long[numLongs];
    for (long i = 0; i < count; i++) {
      long position = i * every;
      words[(int) (position >>> 6)] |= 1L << position;
    }
    ByteBuffer payload = ByteBuffer.allocate(SnapshotEncoder.HEADER_BYTES + numLongs * Long.BYTES);
    payload.put((byte) SnapshotEncoder.STRATEGY_MURMUR128_MITZ_64).put((byte) 1).putInt(numLongs);
    for (long word : words) {
      payload.putLong(word);
    }
    return SnapshotDecoder.decodePayload(payload.array(), KeyType.STRING);
  }
}
