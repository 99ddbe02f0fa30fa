package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Deltas applied to a served filter in place, without a cluster: an add-only delta (or chain) set
 * in place gives byte for byte the payload a full build gives, in both layouts; a delta that clears
 * a bit is not add-only and goes to a copy; a corrupt chunk anywhere in the chain is refused before
 * a single bit is set; an empty delta (a republished version) is never in place; and lookups of a
 * key of the older version never answer "absent" while bits are being set.
 */
class InPlaceDeltasTest {

  private final InMemoryChunks chunks = new InMemoryChunks();

  @Test
  void addOnlyDeltaSetInPlaceGivesTheBytesOfAFullBuildInBothLayouts() throws Exception {
    for (FilterFormat format : FilterFormat.values()) {
      List<String> keys = keys("base", 20_000);
      BloomFilterBits v1 = build(format, keys);
      Manifest m1 = chunks.publishFull(v1, keys.size(), 1);
      keys.addAll(keys("stream", 1_000));
      BloomFilterBits v2 = build(format, keys);
      Manifest m2 = chunks.publishDelta(m1, v2, keys.size(), 2);
      assertThat(m2.deltas().get(0).chunks()).as("several chunks").hasSizeGreaterThan(1);

      BloomFilterBits held = SnapshotDecoder.decode(m1, chunks.source);
      InPlaceDeltas deltas =
          InPlaceDeltas.fetch(m2, held, 1, m1.sha256(), chunks.source).orElseThrow();
      assertThat(deltas.addOnly()).as(format.crdName()).isTrue();
      deltas.setBits();

      // The very array that was served now holds exactly v2's payload.
      assertThat(SnapshotEncoder.sha256(held)).as(format.crdName()).isEqualTo(m2.sha256());
      assertThat(SnapshotEncoder.toByteArray(held)).isEqualTo(SnapshotEncoder.toByteArray(v2));
    }
  }

  @Test
  void aReaderBehindByTwoAddOnlyDeltasSetsBothInPlace() throws Exception {
    List<String> keys = keys("base", 20_000);
    Manifest m1 = chunks.publishFull(build(FilterFormat.SPLIT_BLOCK, keys), keys.size(), 1);
    keys.addAll(keys("first", 500));
    Manifest m2 = chunks.publishDelta(m1, build(FilterFormat.SPLIT_BLOCK, keys), keys.size(), 2);
    keys.addAll(keys("second", 500));
    BloomFilterBits v3 = build(FilterFormat.SPLIT_BLOCK, keys);
    Manifest m3 = chunks.publishDelta(m2, v3, keys.size(), 3);

    BloomFilterBits held = SnapshotDecoder.decode(m1, chunks.source);
    InPlaceDeltas deltas =
        InPlaceDeltas.fetch(m3, held, 1, m1.sha256(), chunks.source).orElseThrow();
    assertThat(deltas.deltas()).isEqualTo(2);
    assertThat(deltas.addOnly()).isTrue();
    deltas.setBits();
    assertThat(SnapshotEncoder.sha256(held)).isEqualTo(m3.sha256());
  }

  @Test
  void aDeltaThatClearsABitIsNotAddOnlyAndGoesToAVerifiedCopy() throws Exception {
    List<String> keys = keys("base", 20_000);
    BloomFilterBits v1 = build(FilterFormat.GUAVA, keys);
    Manifest m1 = chunks.publishFull(v1, keys.size(), 1);
    keys.subList(0, 200).clear(); // counting deletions: their bits go
    keys.addAll(keys("stream", 200));
    BloomFilterBits v2 = build(FilterFormat.GUAVA, keys);
    Manifest m2 = chunks.publishDelta(m1, v2, keys.size(), 2);

    BloomFilterBits held = SnapshotDecoder.decode(m1, chunks.source);
    InPlaceDeltas deltas =
        InPlaceDeltas.fetch(m2, held, 1, m1.sha256(), chunks.source).orElseThrow();
    assertThat(deltas.addOnly()).isFalse();
    assertThatThrownBy(deltas::setBits).isInstanceOf(IllegalStateException.class);
    BloomFilterBits copy = deltas.applyToCopy();
    assertThat(SnapshotEncoder.sha256(copy)).isEqualTo(m2.sha256());
    assertThat(SnapshotEncoder.sha256(held)).isEqualTo(m1.sha256()); // served bits untouched
  }

  @Test
  void aCorruptChunkLateInTheChainIsRefusedBeforeAnyBitIsSet() throws Exception {
    List<String> keys = keys("base", 20_000);
    Manifest m1 = chunks.publishFull(build(FilterFormat.GUAVA, keys), keys.size(), 1);
    keys.addAll(keys("first", 1_000));
    Manifest m2 = chunks.publishDelta(m1, build(FilterFormat.GUAVA, keys), keys.size(), 2);
    keys.addAll(keys("second", 1_000));
    Manifest m3 = chunks.publishDelta(m2, build(FilterFormat.GUAVA, keys), keys.size(), 3);
    // The last chunk of the last delta: everything before it verifies and parses.
    List<Manifest.ChunkRef> last = m3.deltas().get(1).chunks();
    String name = last.get(last.size() - 1).name();
    byte[] bytes = chunks.store.get(name).clone();
    bytes[0] ^= 0x01;
    chunks.store.put(name, bytes);

    BloomFilterBits held = SnapshotDecoder.decode(m1, chunks.source);
    assertThatThrownBy(() -> InPlaceDeltas.fetch(m3, held, 1, m1.sha256(), chunks.source))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("sha256");
    assertThat(SnapshotEncoder.sha256(held)).isEqualTo(m1.sha256());
  }

  @Test
  void anEmptyDeltaOfARepublishedVersionIsNeverInPlace() throws Exception {
    List<String> keys = keys("base", 5_000);
    BloomFilterBits v1 = build(FilterFormat.GUAVA, keys);
    Manifest m1 = chunks.publishFull(v1, keys.size(), 1);
    // What PublishPlan.rollBack writes for a pin or a withdrawn canary: the retained chain plus a
    // header-only delta as the new version.
    Manifest m2 = chunks.publishDelta(m1, v1, keys.size(), 2);
    assertThat(m2.deltas().get(0).changedBits()).isZero();
    AtomicLong fetched = new AtomicLong();
    Optional<InPlaceDeltas> deltas =
        InPlaceDeltas.fetch(
            m2,
            SnapshotDecoder.decode(m1, chunks.source),
            1,
            m1.sha256(),
            (index, ref) -> {
              fetched.incrementAndGet();
              return chunks.source.load(index, ref);
            });
    assertThat(deltas).isEmpty();
    assertThat(fetched).hasValue(0);
  }

  @Test
  void lookupsOfOlderKeysNeverAnswerAbsentWhileBitsAreSet() throws Exception {
    List<String> keys = keys("base", 50_000);
    BloomFilterBits v1 = build(FilterFormat.GUAVA, keys);
    Manifest m1 = chunks.publishFull(v1, keys.size(), 1);
    Manifest manifest = m1;
    BloomFilterBits held = SnapshotDecoder.decode(m1, chunks.source);
    // Published versions, each 2,000 keys more; applied one after another to the served array.
    List<Manifest> versions = new ArrayList<>();
    List<List<String>> keysOf = new ArrayList<>();
    for (long version = 2; version <= 9; version++) {
      keys.addAll(keys("v" + version, 2_000));
      manifest =
          chunks.publishDelta(manifest, build(FilterFormat.GUAVA, keys), keys.size(), version);
      versions.add(manifest);
      keysOf.add(List.copyOf(keys));
    }

    // Lookups run against the served array throughout; each checks the keys of the version that
    // was fully applied when it started.
    AtomicReference<List<String>> settled =
        new AtomicReference<>(List.copyOf(keys.subList(0, 50_000)));
    AtomicBoolean done = new AtomicBoolean();
    AtomicReference<String> absent = new AtomicReference<>();
    AtomicLong lookups = new AtomicLong();
    List<Thread> readers = new ArrayList<>();
    for (int t = 0; t < 2; t++) {
      Thread reader =
          new Thread(
              () -> {
                while (!done.get() && absent.get() == null) {
                  List<String> expected = settled.get();
                  for (String key : expected) {
                    if (!held.mightContainString(key)) {
                      absent.compareAndSet(null, key);
                      return;
                    }
                  }
                  lookups.addAndGet(expected.size());
                }
              });
      reader.start();
      readers.add(reader);
    }
    Manifest previous = m1;
    for (int i = 0; i < versions.size(); i++) {
      Manifest next = versions.get(i);
      InPlaceDeltas deltas =
          InPlaceDeltas.fetch(next, held, previous.version(), previous.sha256(), chunks.source)
              .orElseThrow();
      deltas.setBits();
      settled.set(keysOf.get(i));
      previous = next;
      Thread.sleep(20); // let the lookups run over the new keys too
    }
    Thread.sleep(100);
    done.set(true);
    for (Thread reader : readers) {
      reader.join();
    }
    assertThat(absent.get()).as("a key answered absent").isNull();
    assertThat(lookups.get()).isPositive();
    assertThat(SnapshotEncoder.sha256(held)).isEqualTo(previous.sha256());
  }

  private static List<String> keys(String prefix, int count) {
    List<String> keys = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      keys.add(prefix + "-" + i);
    }
    return keys;
  }

  private static BloomFilterBits build(FilterFormat format, List<String> keys) {
    BloomFilterBits.Builder builder =
        format == FilterFormat.GUAVA
            ? BloomFilterBits.builder(KeyType.STRING, BloomFilterSizing.forKeys(200_000, 0.01))
            : BloomFilterBits.builder(KeyType.STRING, SplitBlockSizing.forKeys(200_000, 0.01));
    for (String key : keys) {
      builder.putString(key);
    }
    return builder.build();
  }
}
