package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.common.hash.BloomFilter;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Delta chains without a cluster: a chain applied to its base is byte for byte the payload a full
 * build publishes, Guava reads the result, and every way of tampering with a delta is refused.
 */
class SnapshotDeltaTest {

  private static final String FILTER = InMemoryChunks.FILTER;
  private static final int CHUNK = InMemoryChunks.CHUNK;

  /** ConfigMaps in memory: chunk name to bytes. */
  private final InMemoryChunks chunks = new InMemoryChunks();

  private final Map<String, byte[]> store = chunks.store;

  private final SnapshotDecoder.ChunkSource source = chunks.source;

  @Test
  void stringChainWithAdditionsAndRemovalsEqualsFullBuildsAndGuava() throws Exception {
    Random random = new Random(42);
    Set<String> keys = new LinkedHashSet<>();
    for (int i = 0; i < 20_000; i++) {
      keys.add("id-" + random.nextLong());
    }
    BloomFilterSizing sizing = BloomFilterSizing.forKeys(30_000, 0.01);
    BloomFilterBits v1 = strings(sizing, keys);
    Manifest manifest = chunks.publishFull(v1, keys.size(), 1);
    BloomFilterBits held = v1;
    Manifest heldManifest = manifest;
    List<Manifest> manifests = new ArrayList<>(List.of(manifest));
    for (long version = 2; version <= 6; version++) {
      List<String> list = new ArrayList<>(keys);
      for (int i = 0; i < 300; i++) {
        keys.remove(list.get(random.nextInt(list.size())));
        keys.add("new-" + random.nextLong());
      }
      BloomFilterBits full = strings(sizing, keys);
      manifest = chunks.publishDelta(manifest, full, keys.size(), version);
      manifests.add(manifest);

      // Cold: base + every delta.
      BloomFilterBits cold = SnapshotDecoder.decode(manifest, source);
      assertThat(SnapshotEncoder.toByteArray(cold)).isEqualTo(SnapshotEncoder.toByteArray(full));
      // Warm: only the newest delta, applied to a copy of the held bits.
      byte[] heldBefore = SnapshotEncoder.toByteArray(held);
      BloomFilterBits warm =
          SnapshotDecoder.update(
              manifest, held, heldManifest.version(), heldManifest.sha256(), source);
      assertThat(warm).isEqualTo(full);
      assertThat(SnapshotEncoder.toByteArray(held)).isEqualTo(heldBefore);
      held = warm;
      heldManifest = manifest;

      BloomFilter<CharSequence> guava =
          GuavaOracle.emptyGuava(
              full.numLongs(), full.numHashFunctions(), GuavaOracle.STRING_FUNNEL);
      keys.forEach(guava::put);
      assertThat(GuavaOracle.readFrom(SnapshotEncoder.toByteArray(cold), GuavaOracle.STRING_FUNNEL))
          .isEqualTo(guava);
      assertThat(manifest.sha256()).isEqualTo(SnapshotEncoder.sha256(full));
    }
    assertThat(manifest.format()).isEqualTo(Manifest.FORMAT_CHAIN);
    assertThat(manifest.deltas()).hasSize(5);
    assertThat(manifest.referencedVersions()).containsExactly(1L, 2L, 3L, 4L, 5L, 6L);
    // A reader that missed versions catches up from any version still in the chain.
    Manifest v3 = manifests.get(2);
    BloomFilterBits atV3 = SnapshotDecoder.decode(v3, source);
    assertThat(manifest.deltasAfter(3, v3.sha256()).orElseThrow()).hasSize(3);
    assertThat(SnapshotDecoder.update(manifest, atV3, 3, v3.sha256(), source)).isEqualTo(held);
    // The whole payload of the result is exactly Guava's, and 300 + 300 keys cost far less
    // than the filter.
    assertThat(manifest.deltas().get(4).bytes()).isLessThan(manifest.totalBytes() / 5);
  }

  @Test
  void longKeysAndManifestJsonRoundTrip() throws Exception {
    BloomFilterSizing sizing = BloomFilterSizing.forKeys(10_000, 0.001);
    BloomFilterBits.Builder a = BloomFilterBits.builder(KeyType.LONG, sizing);
    BloomFilterBits.Builder b = BloomFilterBits.builder(KeyType.LONG, sizing);
    for (long i = 0; i < 8_000; i++) {
      a.putLong(i);
      b.putLong(i + 500); // 500 removed at the bottom, 500 added at the top
    }
    BloomFilterBits from = a.build();
    BloomFilterBits to = b.build();
    Manifest base = chunks.publishFull(from, 8_000, 7);
    Manifest chained = chunks.publishDelta(base, to, 8_000, 9);

    Manifest parsed = Manifest.fromJson(chained.toJson());
    assertThat(parsed).isEqualTo(chained);
    assertThat(base.toJson()).doesNotContain("chain");
    assertThat(Manifest.fromJson(base.toJson())).isEqualTo(base);

    BloomFilterBits loaded = SnapshotDecoder.decode(parsed, source);
    assertThat(loaded).isEqualTo(to);
    BloomFilter<Long> guava =
        GuavaOracle.emptyGuava(to.numLongs(), to.numHashFunctions(), GuavaOracle.LONG_FUNNEL);
    for (long i = 500; i < 8_500; i++) {
      guava.put(i);
    }
    assertThat(GuavaOracle.readFrom(SnapshotEncoder.toByteArray(loaded), GuavaOracle.LONG_FUNNEL))
        .isEqualTo(guava);
    // decodeWhole: what the local snapshot directory stores for a chain.
    assertThat(
            SnapshotDecoder.decodeWhole(
                parsed, new ByteArrayInputStream(SnapshotEncoder.toByteArray(to))))
        .isEqualTo(to);
    assertThatThrownBy(
            () ->
                SnapshotDecoder.decodeWhole(
                    parsed, new ByteArrayInputStream(SnapshotEncoder.toByteArray(from))))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("sha256 mismatch");
  }

  @Test
  void tamperedDeltaChunkIsRefused() throws Exception {
    Fixture f = fixture();
    String name = f.chained.deltas().get(0).chunks().get(1).name();
    byte[] original = store.get(name);
    byte[] tampered = original.clone();
    tampered[10] ^= 0x01;
    store.put(name, tampered);
    assertThatThrownBy(() -> SnapshotDecoder.decode(f.chained, source))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("sha256 mismatch");
    assertThatThrownBy(() -> SnapshotDecoder.update(f.chained, f.from, 1, f.base.sha256(), source))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("delta v2 chunk 1");
    store.remove(name);
    assertThatThrownBy(() -> SnapshotDecoder.decode(f.chained, source))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("is missing");
  }

  @Test
  void consistentButWrongDeltaFailsTheResultDigest() throws Exception {
    // Whoever can write ConfigMaps can write a delta whose chunk digests match the manifest; the
    // digest of the resulting payload still catches it (authenticity needs signatures).
    Fixture f = fixture();
    BloomFilterBits other = strings(f.sizing, Set.of("x", "y", "z"));
    Map<String, byte[]> forged = new HashMap<>();
    SnapshotDelta.Result delta =
        SnapshotDelta.encode(
            f.from,
            other,
            CHUNK,
            (index, data, length, sha) ->
                forged.put(
                    SnapshotNames.deltaChunkName(FILTER, 2, index), Arrays.copyOf(data, length)));
    Manifest lying =
        Manifest.withDelta(f.base, 2, other, 3, f.chained.sha256(), delta, Instant.now());
    forged.forEach(store::put);
    assertThatThrownBy(() -> SnapshotDecoder.decode(lying, source))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("payload sha256 mismatch after applying 1 delta");
  }

  @Test
  void aDeltaStaysInTheStoreOfTheChainItExtends() throws Exception {
    // Its base's chunks are objects of that store: a delta manifest naming no store would send
    // readers to chunk ConfigMaps that do not exist (a roll-back publishes exactly such a delta).
    Fixture f = fixture();
    Manifest stored = f.base.inStore("primary");
    SnapshotDelta.Result delta = SnapshotDelta.encode(f.from, f.from, CHUNK, (i, d, l, s) -> {});
    Manifest next = Manifest.withDelta(stored, 2, f.from, 3, f.base.sha256(), delta, Instant.now());
    assertThat(next.store()).isEqualTo("primary");
    assertThat(
            Manifest.withDelta(f.base, 2, f.from, 3, f.base.sha256(), delta, Instant.now()).store())
        .isNull();
  }

  @Test
  void malformedEncodingsAreRefusedBeforeAnyBitIsServed() {
    long[] words = new long[4];
    // header: encoding 1, k 3, 4 words, 1 changed bit; then a position beyond 256 bits
    byte[] beyond = {1, 3, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 1, (byte) 0x80, 0x02};
    assertThat(applyError(words, 3, 1, beyond)).contains("beyond the filter");
    byte[] trailing = {1, 3, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 1, 5, 7};
    assertThat(applyError(words, 3, 1, trailing)).contains("bytes after the last");
    byte[] truncated = {1, 3, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 2, 5};
    assertThat(applyError(words, 3, 2, truncated)).contains("missing");
    byte[] wrongK = {1, 4, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 1, 5};
    assertThat(applyError(words, 3, 1, wrongK)).contains("k=4");
    byte[] countLies = {1, 3, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 2, 5};
    assertThat(applyError(words, 3, 1, countLies)).contains("changed bits");
    byte[] overlong = new byte[14 + 11];
    System.arraycopy(new byte[] {1, 3, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 1}, 0, overlong, 0, 14);
    Arrays.fill(overlong, 14, overlong.length, (byte) 0xFF);
    assertThat(applyError(words, 3, 1, overlong)).contains("varint");
    assertThat(words).containsOnly(0L); // nothing was flipped by what failed at its first position
  }

  @Test
  void positionsCannotContinuePastTheLastBit() {
    // Audit item 9: after a change at the last bit (255 of 256), the bound used to wrap, so the
    // next gap was accepted whatever it was: 0 indexed past the array, and a 64-bit gap wrapped
    // the position round to bit 5, an arbitrary flip before the final digest check.
    byte[] header = {1, 3, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 2};
    for (long gap : new long[] {0, -251, Long.MAX_VALUE}) {
      long[] words = new long[4];
      byte[] encoded = concat(header, varLong(255), varLong(gap));
      assertThat(applyError(words, 3, 2, encoded)).as("gap " + gap).contains("beyond the filter");
      assertThat(words[0]).as("bit 5 untouched after gap " + gap).isZero();
    }
    // The largest legal position still works.
    long[] words = new long[4];
    byte[] last = concat(new byte[] {1, 3, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 1}, varLong(255));
    assertThat(applyError(words, 3, 1, last)).isEqualTo("no error");
    assertThat(words[3]).isEqualTo(Long.MIN_VALUE);
  }

  private static byte[] varLong(long value) {
    byte[] out = new byte[10];
    int n = 0;
    while ((value & ~0x7FL) != 0) {
      out[n++] = (byte) ((value & 0x7F) | 0x80);
      value >>>= 7;
    }
    out[n++] = (byte) value;
    return Arrays.copyOf(out, n);
  }

  private static byte[] concat(byte[]... parts) {
    int length = 0;
    for (byte[] part : parts) {
      length += part.length;
    }
    byte[] out = new byte[length];
    int at = 0;
    for (byte[] part : parts) {
      System.arraycopy(part, 0, out, at, part.length);
      at += part.length;
    }
    return out;
  }

  @Test
  void chainValidationAndLimits() throws Exception {
    Fixture f = fixture();
    String json = f.chained.toJson();
    assertThatThrownBy(
            () -> Manifest.fromJson(json.replace("\"baseVersion\" : 1", "\"baseVersion\" : 2")))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("baseVersion");
    assertThatThrownBy(
            () -> Manifest.fromJson(json.replace(Manifest.FORMAT_CHAIN, Manifest.FORMAT)))
        .hasMessageContaining("has no chain");
    assertThatThrownBy(
            () ->
                Manifest.fromJson(f.base.toJson().replace(Manifest.FORMAT, Manifest.FORMAT_CHAIN)))
        .hasMessageContaining("needs a chain");
    // A delta chunk named after another filter's ConfigMap is refused before any GET.
    String foreign = f.chained.deltas().get(0).chunks().get(0).name();
    Manifest pointing = Manifest.fromJson(json.replace(foreign, "kube-root-ca.crt"));
    assertThatThrownBy(() -> SnapshotLimits.forThisHeap().check(pointing, FILTER))
        .isInstanceOf(SnapshotRefusedException.class)
        .hasMessageContaining("delta v2 chunk 0");
    assertThatThrownBy(
            () ->
                SnapshotLimits.forThisHeap()
                    .withMaxChunks(f.base.chunks().size())
                    .check(f.chained, FILTER))
        .hasMessageContaining("chunks, more than");
    SnapshotLimits.forThisHeap().check(f.chained, FILTER);
  }

  @Test
  void chainOfMoreDeltaBytesThanTheReaderAcceptsIsRefusedBeforeAnyGet() throws Exception {
    // Whole-filter flips: each delta is about half the payload, so three add up to more than it.
    BloomFilterSizing sizing = BloomFilterSizing.forKeys(2_000, 0.01);
    BloomFilterBits empty = strings(sizing, Set.of());
    Set<String> keys = new LinkedHashSet<>();
    for (int i = 0; i < 2_000; i++) {
      keys.add("k" + i);
    }
    BloomFilterBits full = strings(sizing, keys);
    Manifest chain = chunks.publishFull(empty, 0, 1);
    chain = chunks.publishDelta(chain, full, 2_000, 2);
    chain = chunks.publishDelta(chain, empty, 0, 3);
    chain = chunks.publishDelta(chain, full, 2_000, 4);
    assertThat(chain.deltaBytes()).isGreaterThan(chain.totalBytes());
    Manifest refused = chain;
    assertThatThrownBy(
            () ->
                SnapshotLimits.forThisHeap()
                    .withMaxTotalBytes(refused.totalBytes())
                    .check(refused, FILTER))
        .isInstanceOf(SnapshotRefusedException.class)
        .hasMessageContaining("bytes of deltas");
    SnapshotLimits.forThisHeap().check(refused, FILTER);
    assertThat(SnapshotDecoder.decode(refused, source)).isEqualTo(full);
  }

  @Test
  void encodedSizeMatchesEncodingAndStopsAtTheLimit() throws Exception {
    Fixture f = fixture();
    long size = SnapshotDelta.encodedSize(f.from, f.to, Long.MAX_VALUE);
    assertThat(size).isEqualTo(f.chained.deltas().get(0).bytes());
    assertThat(SnapshotDelta.encodedSize(f.from, f.to, size - 1)).isEqualTo(-1);
    assertThat(SnapshotDelta.encodedSize(f.from, f.from, 100))
        .isEqualTo(SnapshotDelta.HEADER_BYTES);
  }

  private String applyError(long[] words, int k, long changedBits, byte[] encoded) {
    Manifest.ChunkRef ref =
        new Manifest.ChunkRef("c", encoded.length, Sha256.hex(encoded, 0, encoded.length));
    Manifest.Delta delta =
        new Manifest.Delta(2, encoded.length, changedBits, "0".repeat(64), List.of(ref));
    try {
      SnapshotDelta.apply(words, k, delta, (index, r) -> encoded);
      return "no error";
    } catch (SnapshotVerificationException | IOException e) {
      return e.getMessage();
    } catch (RuntimeException e) {
      return "runtime " + e;
    }
  }

  private record Fixture(
      BloomFilterSizing sizing,
      BloomFilterBits from,
      BloomFilterBits to,
      Manifest base,
      Manifest chained) {}

  private Fixture fixture() throws Exception {
    BloomFilterSizing sizing = BloomFilterSizing.forKeys(5_000, 0.01);
    Set<String> keys = new LinkedHashSet<>();
    for (int i = 0; i < 4_000; i++) {
      keys.add("k" + i);
    }
    BloomFilterBits from = strings(sizing, keys);
    for (int i = 0; i < 400; i++) {
      keys.remove("k" + i);
      keys.add("n" + i);
    }
    BloomFilterBits to = strings(sizing, keys);
    Manifest base = chunks.publishFull(from, 4_000, 1);
    Manifest chained = chunks.publishDelta(base, to, 4_000, 2);
    assertThat(chained.deltas().get(0).chunks()).hasSizeGreaterThan(1);
    return new Fixture(sizing, from, to, base, chained);
  }

  private static BloomFilterBits strings(BloomFilterSizing sizing, Set<String> keys) {
    BloomFilterBits.Builder builder = BloomFilterBits.builder(KeyType.STRING, sizing);
    keys.forEach(builder::putString);
    return builder.build();
  }
}
