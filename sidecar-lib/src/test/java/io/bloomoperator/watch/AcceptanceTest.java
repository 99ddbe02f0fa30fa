package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.snapshot.AnnouncedManifest;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Ed25519Keys;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.ManifestCopy;
import io.bloomoperator.snapshot.ManifestSigner;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotLimits;
import io.bloomoperator.snapshot.SnapshotRefusedException;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.bloomoperator.snapshot.TrustedKeys;
import java.security.KeyPair;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The reader's acceptance rule as a table: each row is (announced, served, reader) and the verdict
 * an application relies on. No cluster, no chunk: the rule only looks at the manifest.
 */
class AcceptanceTest {

  private static final String NS = "shop";
  private static final String FILTER = "ids";
  private static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");
  private static final Duration MAX_AGE = Duration.ofHours(1);
  private static final KeyPair KEY = Ed25519Keys.generate();
  private static final KeyPair OTHER_KEY = Ed25519Keys.generate();
  private static final BloomFilterBits STRINGS =
      TestKeys.stringFilter(2_000, TestKeys.strings("k", 1_000));
  private static final BloomFilterBits LONGS = TestKeys.longFilter(2_000, new long[] {1, 2, 3});

  // Readers.
  private static final Acceptance OPEN = reader(TrustedKeys.none(), null);
  private static final Acceptance SIGNED = reader(TrustedKeys.of(List.of(KEY.getPublic())), null);
  private static final Acceptance WITH_STORE = OPEN.withStores(java.util.Set.of("primary"));
  private static final Acceptance SIGNED_MAX_AGE =
      reader(TrustedKeys.of(List.of(KEY.getPublic())), MAX_AGE);

  // Manifests: v1 and v2 an hour apart, v1 re-created later, both key types.
  private static final Manifest V1 = manifest(FILTER, 1, STRINGS, NOW.minusSeconds(600));
  private static final Manifest V2 = manifest(FILTER, 2, STRINGS, NOW.minusSeconds(60));
  private static final Manifest V2_SAME_TIME = manifest(FILTER, 2, STRINGS, V1.created());
  private static final Manifest V1_RECREATED = manifest(FILTER, 1, recreatedBits(), NOW);
  private static final Manifest OTHER_FILTER = manifest("other", 1, STRINGS, NOW);
  private static final Manifest V2_LONG = manifest(FILTER, 2, LONGS, NOW);
  private static final Manifest TOO_OLD =
      manifest(FILTER, 3, STRINGS, NOW.minus(MAX_AGE).minusMillis(1));
  private static final Manifest JUST_YOUNG_ENOUGH =
      manifest(FILTER, 3, STRINGS, NOW.minus(MAX_AGE));

  static Stream<Arguments> table() {
    return Stream.of(
        // what is served decides nothing for a first snapshot
        row("first snapshot", OPEN, unsigned(V1), null, load()),
        row("newer version", OPEN, unsigned(V2), unsigned(V1), load()),
        row("same version and digest", OPEN, unsigned(V1), unsigned(V1), same()),
        row("same version, other digest", OPEN, unsigned(V1_RECREATED), unsigned(V1), load()),
        row("lower version, unsigned: re-created", OPEN, unsigned(V1), unsigned(V2), load()),
        // bounds and names, before anything is fetched
        row(
            "another filter's",
            OPEN,
            unsigned(OTHER_FILTER),
            null,
            refused(LoadFailureReason.WRONG_FILTER)),
        row("too large", reader(smallLimits(V1.totalBytes() - 1)), unsigned(V1), null, tooLarge()),
        row("exactly the limit", reader(smallLimits(V1.totalBytes())), unsigned(V1), null, load()),
        row(
            "foreign chunk",
            OPEN,
            unsigned(foreignChunk(V1)),
            null,
            refused(LoadFailureReason.FOREIGN_CHUNK)),
        row(
            "oversized re-announcement",
            reader(smallLimits(1)),
            unsigned(V1),
            unsigned(V1),
            tooLarge()),
        // signatures
        row("signed", SIGNED, signed(V1, KEY, NS), null, load()),
        row(
            "unsigned, keys trusted",
            SIGNED,
            unsigned(V1),
            null,
            refused(LoadFailureReason.UNSIGNED)),
        row(
            "untrusted key",
            SIGNED,
            signed(V1, OTHER_KEY, NS),
            null,
            refused(LoadFailureReason.UNTRUSTED_KEY)),
        row(
            "signed for another namespace",
            SIGNED,
            signed(V1, KEY, "other"),
            null,
            refused(LoadFailureReason.BAD_SIGNATURE)),
        row("signature ignored without keys", OPEN, signed(V1, OTHER_KEY, NS), null, load()),
        row(
            "bad signature on the served one",
            SIGNED,
            signed(V1, KEY, "x"),
            signed(V1, KEY, NS),
            refused(LoadFailureReason.BAD_SIGNATURE)),
        // rollback: only with trusted keys
        row("signed, newer", SIGNED, signed(V2, KEY, NS), signed(V1, KEY, NS), load()),
        row(
            "signed, older",
            SIGNED,
            signed(V1, KEY, NS),
            signed(V2, KEY, NS),
            refused(LoadFailureReason.ROLLBACK)),
        row("signed, same again", SIGNED, signed(V2, KEY, NS), signed(V2, KEY, NS), same()),
        row(
            "signed, same time, higher version",
            SIGNED,
            signed(V2_SAME_TIME, KEY, NS),
            signed(V1, KEY, NS),
            load()),
        row(
            "signed, same time, lower version",
            SIGNED,
            signed(V1, KEY, NS),
            signed(V2_SAME_TIME, KEY, NS),
            refused(LoadFailureReason.ROLLBACK)),
        row(
            "signed, re-created later",
            SIGNED,
            signed(V1_RECREATED, KEY, NS),
            signed(V2, KEY, NS),
            load()),
        // maximum age
        row(
            "older than the maximum age",
            SIGNED_MAX_AGE,
            signed(TOO_OLD, KEY, NS),
            null,
            refused(LoadFailureReason.TOO_OLD)),
        row(
            "exactly the maximum age",
            SIGNED_MAX_AGE,
            signed(JUST_YOUNG_ENOUGH, KEY, NS),
            null,
            load()),
        row(
            "old but served: same",
            SIGNED_MAX_AGE,
            signed(TOO_OLD, KEY, NS),
            signed(TOO_OLD, KEY, NS),
            same()),
        row(
            "old, local directory",
            SIGNED_MAX_AGE.withoutMaxAge(),
            signed(TOO_OLD, KEY, NS),
            null,
            load()),
        // key type, last
        row("other key type", OPEN, unsigned(V2_LONG), unsigned(V1), wrongKeyType()),
        row("other key type, first", OPEN, unsigned(V2_LONG), null, wrongKeyType()),
        // object stores: only a name in the manifest, resolved by the reader's own configuration
        row(
            "chunks in a store, reader without stores",
            OPEN,
            unsigned(V2.inStore("primary")),
            unsigned(V1),
            refused(LoadFailureReason.UNKNOWN_STORE)),
        row(
            "chunks in a store the reader does not know",
            WITH_STORE,
            unsigned(V2.inStore("other")),
            unsigned(V1),
            refused(LoadFailureReason.UNKNOWN_STORE)),
        row(
            "signed, in a store the reader does not know",
            SIGNED.withStores(java.util.Set.of("primary")),
            signed(V1.inStore("elsewhere"), KEY, NS),
            null,
            refused(LoadFailureReason.UNKNOWN_STORE)),
        row("chunks in a known store", WITH_STORE, unsigned(V2.inStore("primary")), null, load()),
        row("ConfigMap chunks, reader with stores", WITH_STORE, unsigned(V2), null, load()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void verdict(
      String row,
      Acceptance reader,
      AnnouncedManifest announced,
      AnnouncedManifest served,
      Expected expected) {
    Acceptance.Verdict verdict = reader.judge(announced, served, NOW);
    expected.check(verdict);
  }

  @Test
  void theLocalDirectoryRuleIsTheSameButForTheAge() {
    Acceptance local = SIGNED_MAX_AGE.withoutMaxAge();
    assertThat(local.maxManifestAge()).isNull();
    assertThat(local.withoutMaxAge()).isEqualTo(local);
    load().check(local.judge(signed(TOO_OLD, KEY, NS), null, NOW));
    refused(LoadFailureReason.UNSIGNED).check(local.judge(unsigned(V1), null, NOW));
    // The local directory keeps the reader's stores: a cached manifest of an unknown store is
    // refused like one from the API server.
    Acceptance localWithStore = WITH_STORE.withoutMaxAge();
    assertThat(localWithStore.stores()).containsExactly("primary");
    refused(LoadFailureReason.UNKNOWN_STORE)
        .check(localWithStore.judge(unsigned(V1.inStore("other")), null, NOW));
    load().check(localWithStore.judge(unsigned(V1.inStore("primary")), null, NOW));
  }

  // ---------------------------------------------------------------- expectations

  /** What a row expects of a verdict. */
  interface Expected {
    void check(Acceptance.Verdict verdict);
  }

  private static Expected load() {
    return verdict -> assertThat(verdict).isInstanceOf(Acceptance.Verdict.Load.class);
  }

  private static Expected same() {
    return verdict -> assertThat(verdict).isInstanceOf(Acceptance.Verdict.Same.class);
  }

  private static Expected refused(LoadFailureReason reason) {
    return verdict -> {
      assertThat(verdict).isInstanceOf(Acceptance.Verdict.Refuse.class);
      SnapshotVerificationException why = ((Acceptance.Verdict.Refuse) verdict).reason();
      assertThat(why).isInstanceOf(SnapshotRefusedException.class);
      assertThat(((SnapshotRefusedException) why).reason()).isEqualTo(reason);
      assertThat(LoadFailureReason.of(why).name()).isEqualTo(reason.name());
    };
  }

  private static Expected tooLarge() {
    return refused(LoadFailureReason.TOO_LARGE);
  }

  private static Expected wrongKeyType() {
    return verdict -> {
      assertThat(verdict).isInstanceOf(Acceptance.Verdict.Refuse.class);
      SnapshotVerificationException why = ((Acceptance.Verdict.Refuse) verdict).reason();
      assertThat(why).isNotInstanceOf(SnapshotRefusedException.class);
      assertThat(why).hasMessageContaining("holds Long keys").hasMessageContaining("String");
      assertThat(LoadFailureReason.of(why)).isEqualTo(LoadFailureReason.VERIFICATION);
    };
  }

  // ---------------------------------------------------------------- fixtures

  private static Arguments row(
      String name,
      Acceptance reader,
      AnnouncedManifest announced,
      AnnouncedManifest served,
      Expected expected) {
    return Arguments.of(name, reader, announced, served, expected);
  }

  private static Acceptance reader(TrustedKeys keys, Duration maxAge) {
    return new Acceptance(NS, FILTER, KeyType.STRING, SnapshotLimits.forThisHeap(), keys, maxAge);
  }

  private static Acceptance reader(SnapshotLimits limits) {
    return new Acceptance(NS, FILTER, KeyType.STRING, limits, TrustedKeys.none(), null);
  }

  private static SnapshotLimits smallLimits(long maxTotalBytes) {
    return new SnapshotLimits(maxTotalBytes, SnapshotLimits.DEFAULT_MAX_CHUNKS);
  }

  private static BloomFilterBits recreatedBits() {
    // Another String filter (other keys, so another digest) for a re-created filter's v1.
    return TestKeys.stringFilter(2_000, TestKeys.strings("recreated", 1_000));
  }

  private static Manifest manifest(String filter, long version, BloomFilterBits bits, Instant at) {
    try {
      SnapshotEncoder.Result encoded = SnapshotEncoder.encode(bits, 1_000, (i, d, l, s) -> {});
      return Manifest.of(filter, version, bits, 1_000, encoded, at);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static Manifest foreignChunk(Manifest manifest) {
    Manifest.ChunkRef first = manifest.chunks().get(0);
    List<Manifest.ChunkRef> chunks = new java.util.ArrayList<>(manifest.chunks());
    chunks.set(0, new Manifest.ChunkRef("kube-root-ca.crt", first.bytes(), first.sha256()));
    return ManifestCopy.of(manifest).chunks(chunks).build();
  }

  private static AnnouncedManifest unsigned(Manifest manifest) {
    return new AnnouncedManifest(manifest, manifest.toJson(), null);
  }

  private static AnnouncedManifest signed(Manifest manifest, KeyPair key, String namespace) {
    String json = manifest.toJson();
    return new AnnouncedManifest(
        manifest, json, new ManifestSigner(key.getPrivate()).sign(namespace, json).toData());
  }
}
