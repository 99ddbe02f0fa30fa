package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * What a reader relies on the format's checks for, each at its edge: every decoding path refuses an
 * invalid manifest before it fetches a chunk, the chain walk finds exactly the versions a chain
 * holds, and every limit lets its maximum through and refuses one more.
 */
class VerificationContractTest {

  private static final String FILTER = "ids";
  private static final int CHUNK = 997;

  private final Map<String, byte[]> store = new HashMap<>();
  private final AtomicInteger fetches = new AtomicInteger();
  private final SnapshotDecoder.ChunkSource source =
      (index, ref) -> {
        fetches.incrementAndGet();
        return store.get(ref.name());
      };

  // ---------------------------------------------------------------- invalid manifests

  @Test
  void everyDecodingPathRefusesAnInvalidManifestBeforeFetchingAChunk() throws Exception {
    Chain chain = chain();
    // Valid in every field a decoder uses; only validate() notices the date.
    Manifest badBase = ManifestCopy.of(chain.base).createdAt("yesterday").build();
    Manifest badChained = ManifestCopy.of(chain.chained).createdAt("yesterday").build();

    assertInvalid(() -> SnapshotDecoder.decode(badBase, source));
    assertInvalid(() -> SnapshotDecoder.decodeVersion(badChained, 1, source));
    assertInvalid(
        () -> SnapshotDecoder.update(badChained, chain.v1, 1, chain.base.sha256(), source));
    assertInvalid(
        () ->
            SnapshotDecoder.decodeWhole(
                badBase, new ByteArrayInputStream(SnapshotEncoder.toByteArray(chain.v1))));
    assertInvalid(
        () -> SnapshotDecoder.decode(badBase, List.of(store.get(chunk(1, 0))).iterator()));
    assertThat(fetches.get()).isZero();
  }

  @Test
  void theSameCallsAcceptTheValidManifests() throws Exception {
    Chain chain = chain();
    byte[] v1 = SnapshotEncoder.toByteArray(chain.v1);
    byte[] v2 = SnapshotEncoder.toByteArray(chain.v2);
    assertThat(bytes(SnapshotDecoder.decode(chain.base, source))).isEqualTo(v1);
    assertThat(bytes(SnapshotDecoder.decodeVersion(chain.chained, 1, source))).isEqualTo(v1);
    assertThat(bytes(SnapshotDecoder.decodeVersion(chain.chained, 2, source))).isEqualTo(v2);
    fetches.set(0);
    assertThat(
            bytes(SnapshotDecoder.update(chain.chained, chain.v1, 1, chain.base.sha256(), source)))
        .isEqualTo(v2);
    assertThat(fetches.get()).isEqualTo(chain.chained.deltas().get(0).chunks().size());
    assertThat(bytes(SnapshotDecoder.decodeWhole(chain.base, new ByteArrayInputStream(v1))))
        .isEqualTo(v1);
  }

  @Test
  void aBaseThatDoesNotMatchItsDigestIsNamedAsTheBase() throws Exception {
    Chain chain = chain();
    Manifest wrongBase =
        ManifestCopy.of(chain.chained)
            .chain(new Manifest.Chain(1, "ab".repeat(32), chain.chained.deltas()))
            .build();
    assertThatThrownBy(() -> SnapshotDecoder.decode(wrongBase, source))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageStartingWith("base v1 payload sha256 mismatch");
    Manifest wrongWhole = ManifestCopy.of(chain.base).sha256("ab".repeat(32)).build();
    assertThatThrownBy(() -> SnapshotDecoder.decode(wrongWhole, source))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageStartingWith("payload sha256 mismatch");
  }

  // ---------------------------------------------------------------- the chain walk

  @Test
  void deltasAfterFindsExactlyTheVersionsTheChainHolds() throws Exception {
    Chain chain = chain();
    Manifest m = chain.chained;
    String v1 = chain.base.sha256();
    String v2 = m.sha256();
    assertThat(m.deltasAfter(2, v2)).contains(List.of());
    assertThat(m.deltasAfter(2, v2.toUpperCase())).contains(List.of());
    assertThat(m.deltasAfter(1, v1)).contains(m.deltas());
    assertThat(m.deltasAfter(1, v1.toUpperCase())).contains(m.deltas());
    // The right version with another digest (a re-created filter) is not in the chain.
    assertThat(m.deltasAfter(2, v1)).isEmpty();
    assertThat(m.deltasAfter(1, v2)).isEmpty();
    assertThat(m.deltasAfter(3, v2)).isEmpty();
    assertThat(m.deltasAfter(0, v1)).isEmpty();
    assertThat(m.deltasAfter(1, null)).isEmpty();
    // A whole manifest holds only itself.
    assertThat(chain.base.deltasAfter(1, v1)).contains(List.of());
    assertThat(chain.base.deltasAfter(0, v1)).isEmpty();
    assertThat(chain.base.deltasAfter(1, v2)).isEmpty();
  }

  @Test
  void deltasAfterAMiddleVersionAreTheOnesAfterIt() throws Exception {
    Chain chain = chain();
    BloomFilterBits v3 = strings(5_000, "third", 4_000);
    Manifest m3 = publishDelta(chain.chained, chain.v2, v3, 3);
    assertThat(m3.deltas()).hasSize(2);
    assertThat(m3.deltasAfter(2, chain.chained.sha256())).contains(m3.deltas().subList(1, 2));
    assertThat(m3.deltasAfter(2, chain.base.sha256())).isEmpty();
    assertThat(m3.deltasAfter(1, chain.base.sha256())).contains(m3.deltas());
    assertThat(bytes(SnapshotDecoder.update(m3, chain.v2, 2, chain.chained.sha256(), source)))
        .isEqualTo(SnapshotEncoder.toByteArray(v3));
    // Every version the chain holds can be rebuilt, and only those.
    assertThat(bytes(SnapshotDecoder.decodeVersion(m3, 1, source))).isEqualTo(bytes(chain.v1));
    assertThat(bytes(SnapshotDecoder.decodeVersion(m3, 2, source))).isEqualTo(bytes(chain.v2));
    assertThat(bytes(SnapshotDecoder.decodeVersion(m3, 3, source))).isEqualTo(bytes(v3));
    for (long absent : new long[] {0, 4}) {
      assertThatThrownBy(() -> SnapshotDecoder.decodeVersion(m3, absent, source))
          .isInstanceOf(SnapshotVerificationException.class)
          .hasMessageContaining("not in the published chain");
    }
  }

  @Test
  void chainedAndDescribesTellManifestsApart() throws Exception {
    Chain chain = chain();
    assertThat(chain.base.chained()).isFalse();
    assertThat(chain.chained.chained()).isTrue();
    assertThat(chain.base.describes(chain.v1)).isTrue();
    assertThat(
            chain.base.describes(
                BloomFilterBits.builder(
                        KeyType.LONG, chain.v1.numBits(), chain.v1.numHashFunctions())
                    .build()))
        .isFalse();
    assertThat(
            chain.base.describes(
                BloomFilterBits.builder(
                        KeyType.STRING, chain.v1.numBits() + 64, chain.v1.numHashFunctions())
                    .build()))
        .isFalse();
    assertThat(
            chain.base.describes(
                BloomFilterBits.builder(
                        KeyType.STRING, chain.v1.numBits(), chain.v1.numHashFunctions() + 1)
                    .build()))
        .isFalse();
  }

  @Test
  void updateFromBitsOfAnotherGeometryLoadsTheWholeChain() throws Exception {
    Chain chain = chain();
    BloomFilterBits otherGeometry =
        BloomFilterBits.builder(KeyType.STRING, chain.v1.numBits(), chain.v1.numHashFunctions() + 1)
            .build();
    fetches.set(0);
    BloomFilterBits result =
        SnapshotDecoder.update(chain.chained, otherGeometry, 1, chain.base.sha256(), source);
    assertThat(bytes(result)).isEqualTo(SnapshotEncoder.toByteArray(chain.v2));
    assertThat(fetches.get()).isEqualTo(chain.chained.chunkCount());
  }

  // ---------------------------------------------------------------- limits at their edges

  @Test
  void everyLimitLetsItsMaximumThroughAndRefusesOneMore() throws Exception {
    Chain chain = chain();
    Manifest m = chain.chained;
    long chainBytes = m.deltaBytes();
    long wholeBytes = Math.max(m.totalBytes(), m.numBits() / Byte.SIZE);
    long atMost = Math.max(wholeBytes, chainBytes);
    new SnapshotLimits(atMost, m.chunkCount()).check(m, FILTER);
    assertRefused(m, new SnapshotLimits(atMost, m.chunkCount() - 1));
    // Each byte bound on its own: totalBytes, then the chain's delta bytes.
    Manifest whole = chain.base;
    new SnapshotLimits(whole.totalBytes(), 10_000).check(whole, FILTER);
    assertRefused(whole, new SnapshotLimits(whole.totalBytes() - 1, 10_000));
    Manifest deltaHeavy = deltaHeavyChain();
    assertThat(deltaHeavy.deltaBytes()).isGreaterThan(deltaHeavy.totalBytes());
    new SnapshotLimits(deltaHeavy.deltaBytes(), 10_000).check(deltaHeavy, FILTER);
    assertRefused(deltaHeavy, new SnapshotLimits(deltaHeavy.deltaBytes() - 1, 10_000));
  }

  @Test
  void theBitCountIsBoundedEvenWhereTotalBytesUnderstatesIt() throws Exception {
    // check() runs on parsed manifests, but must not trust totalBytes to bound the allocation.
    long numBits = 64L * 1024 * 1024;
    Manifest understated = ManifestCopy.of(withFirstChunkOf(1_000)).build();
    Manifest lying =
        new Manifest(
            understated.format(),
            1,
            FILTER,
            KeyType.STRING,
            numBits,
            3,
            1,
            0.5,
            1_000,
            "0".repeat(64),
            understated.createdAt(),
            List.of(new Manifest.ChunkRef(chunk(1, 0), 1_000, "0".repeat(64))));
    new SnapshotLimits(numBits / Byte.SIZE, 10).check(lying, FILTER);
    assertRefused(lying, new SnapshotLimits(numBits / Byte.SIZE - 1, 10));
  }

  @Test
  void aChunkOfExactlyOneMebibyteFitsAndOneByteMoreDoesNot() throws Exception {
    SnapshotLimits roomy = new SnapshotLimits(SnapshotLimits.FORMAT_MAX_BYTES, 10_000);
    roomy.check(withFirstChunkOf(SnapshotLimits.MAX_CHUNK_BYTES), FILTER);
    assertRefused(withFirstChunkOf(SnapshotLimits.MAX_CHUNK_BYTES + 1), roomy);
  }

  @Test
  void aDeltaChunkWithAForeignNameIsRefused() throws Exception {
    Chain chain = chain();
    Manifest m = chain.chained;
    Manifest.Delta delta = m.deltas().get(0);
    List<Manifest.ChunkRef> refs = new ArrayList<>(delta.chunks());
    Manifest.ChunkRef first = refs.get(0);
    refs.set(0, new Manifest.ChunkRef(chunk(2, 0), first.bytes(), first.sha256()));
    Manifest.Delta renamed =
        new Manifest.Delta(
            delta.version(), delta.bytes(), delta.changedBits(), delta.sha256(), refs);
    Manifest forged =
        ManifestCopy.of(m)
            .chain(
                new Manifest.Chain(
                    m.chain().baseVersion(), m.chain().baseSha256(), List.of(renamed)))
            .build();
    assertThatThrownBy(
            () -> new SnapshotLimits(SnapshotLimits.FORMAT_MAX_BYTES, 10_000).check(forged, FILTER))
        .isInstanceOfSatisfying(
            SnapshotRefusedException.class,
            e -> assertThat(e.reason()).isEqualTo(LoadFailureReason.FOREIGN_CHUNK));
  }

  // ---------------------------------------------------------------- fixtures

  private record Chain(BloomFilterBits v1, BloomFilterBits v2, Manifest base, Manifest chained) {}

  private Chain chain() throws Exception {
    BloomFilterBits v1 = strings(5_000, "first", 4_000);
    BloomFilterBits v2 = strings(5_000, "second", 4_000);
    Manifest base = publishFull(v1, 1);
    return new Chain(v1, v2, base, publishDelta(base, v1, v2, 2));
  }

  /** A chain whose deltas cost more than a whole snapshot: everything changed, twice. */
  private Manifest deltaHeavyChain() throws Exception {
    BloomFilterBits a = strings(200, "a", 150);
    BloomFilterBits b = strings(200, "b", 150);
    Manifest m = publishDelta(publishFull(a, 1), a, b, 2);
    return publishDelta(m, b, a, 3);
  }

  private Manifest withFirstChunkOf(int bytes) {
    // Two chunks: the first of {@code bytes}, the second a little under 1 MiB.
    long words = 2L * SnapshotLimits.MAX_CHUNK_BYTES / Long.BYTES - 1;
    long total = SnapshotEncoder.HEADER_BYTES + Long.BYTES * words;
    Manifest m =
        new Manifest(
            Manifest.FORMAT,
            1,
            FILTER,
            KeyType.STRING,
            Long.SIZE * words,
            3,
            1,
            0.5,
            total,
            "0".repeat(64),
            "2026-11-30T00:00:00Z",
            List.of(
                new Manifest.ChunkRef(chunk(1, 0), bytes, "0".repeat(64)),
                new Manifest.ChunkRef(chunk(1, 1), (int) (total - bytes), "0".repeat(64))));
    try {
      m.validate();
    } catch (SnapshotVerificationException e) {
      throw new AssertionError(e);
    }
    return m;
  }

  private static String chunk(long version, int index) {
    return SnapshotNames.chunkName(FILTER, version, index);
  }

  private static BloomFilterBits strings(long expected, String prefix, int count) {
    BloomFilterBits.Builder builder =
        BloomFilterBits.builder(KeyType.STRING, BloomFilterSizing.forKeys(expected, 0.01));
    for (int i = 0; i < count; i++) {
      builder.putString(prefix + i);
    }
    return builder.build();
  }

  private Manifest publishFull(BloomFilterBits bits, long version) throws IOException {
    SnapshotEncoder.Result encoded =
        SnapshotEncoder.encode(
            bits,
            CHUNK,
            (index, data, length, sha) ->
                store.put(chunk(version, index), Arrays.copyOf(data, length)));
    return Manifest.of(FILTER, version, bits, 1_000, encoded, Instant.now());
  }

  private Manifest publishDelta(
      Manifest previous, BloomFilterBits from, BloomFilterBits to, long version) throws Exception {
    SnapshotDelta.Result delta =
        SnapshotDelta.encode(
            from,
            to,
            CHUNK,
            (index, data, length, sha) ->
                store.put(
                    SnapshotNames.deltaChunkName(FILTER, version, index),
                    Arrays.copyOf(data, length)));
    return Manifest.withDelta(
        previous, version, to, 1_000, SnapshotEncoder.sha256(to), delta, Instant.now());
  }

  private static byte[] bytes(BloomFilterBits bits) throws IOException {
    return SnapshotEncoder.toByteArray(bits);
  }

  private void assertInvalid(ThrowingCall call) {
    assertThatThrownBy(call::run)
        .isInstanceOf(SnapshotVerificationException.class)
        .isNotInstanceOf(SnapshotRefusedException.class)
        .hasMessageContaining("createdAt");
  }

  private static void assertRefused(Manifest manifest, SnapshotLimits limits) {
    assertThatThrownBy(() -> limits.check(manifest, FILTER))
        .isInstanceOfSatisfying(
            SnapshotRefusedException.class,
            e -> assertThat(e.reason()).isEqualTo(LoadFailureReason.TOO_LARGE));
  }

  @FunctionalInterface
  private interface ThrowingCall {
    void run() throws Exception;
  }
}
