package io.bloomoperator.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.publish.PublishPlan.Budget;
import io.bloomoperator.publish.PublishPlan.Facts;
import io.bloomoperator.publish.PublishPlan.Kind;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.ChunkStore.Part;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotDelta;
import io.bloomoperator.snapshot.SnapshotEncoder;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every branch of the publish plan, without a cluster: which kind of write, the version and
 * createdAt, the parts the manifest names afterwards, the versions retained, the budgets.
 */
class PublishPlanTest {

  private static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");
  private static final int CHUNK = 1024;
  private static final String FILTER = "ids";
  private static final DeltaPolicy DELTAS = DeltaPolicy.defaults();

  /** v3, a whole base of 1,030 bytes (2 chunks). */
  private static final Manifest WHOLE_V3 = whole(3, NOW.minusSeconds(60));

  /** Base v3 with deltas v4 and v5. */
  private static final Manifest CHAIN_V5 = chain(WHOLE_V3, 2);

  private static final BloomFilterBits NEW = bits("new", 100);
  private static final long SIZE = SnapshotEncoder.payloadSize(NEW);
  private static final String SHA = SnapshotEncoder.sha256(NEW);

  static Stream<Arguments> kinds() {
    return Stream.of(
        // published, delta size, lastKnownVersion, policy -> kind, version, names, superseded
        Arguments.of(
            "first version",
            null,
            -1L,
            0L,
            DELTAS,
            Kind.WHOLE,
            1L,
            Set.of(Part.base(1)),
            List.of()),
        Arguments.of(
            "first version above the status's",
            null,
            -1L,
            7L,
            DELTAS,
            Kind.WHOLE,
            8L,
            Set.of(Part.base(8)),
            List.of()),
        Arguments.of(
            "no delta possible",
            WHOLE_V3,
            -1L,
            3L,
            DELTAS,
            Kind.WHOLE,
            4L,
            Set.of(Part.base(4)),
            List.of(3L)),
        Arguments.of(
            "delta on a whole base",
            WHOLE_V3,
            40L,
            3L,
            DELTAS,
            Kind.DELTA,
            4L,
            Set.of(Part.base(3), Part.delta(4)),
            List.of()),
        Arguments.of(
            "delta appended to a chain",
            CHAIN_V5,
            40L,
            5L,
            DELTAS,
            Kind.DELTA,
            6L,
            Set.of(Part.base(3), Part.delta(4), Part.delta(5), Part.delta(6)),
            List.of()),
        Arguments.of(
            "chain full: compacted",
            CHAIN_V5,
            40L,
            5L,
            new DeltaPolicy(2, 25, 50),
            Kind.REBASE,
            6L,
            Set.of(Part.base(5), Part.delta(6)),
            List.of(3L, 4L, 5L)),
        Arguments.of(
            "delta over the chain's share: compacted",
            CHAIN_V5,
            SIZE / 2,
            5L,
            DELTAS,
            Kind.REBASE,
            6L,
            Set.of(Part.base(5), Part.delta(6)),
            List.of(3L, 4L, 5L)),
        Arguments.of(
            "delta over the chain's share of a whole base: whole",
            WHOLE_V3,
            SIZE / 2 + 1,
            3L,
            DELTAS,
            Kind.WHOLE,
            4L,
            Set.of(Part.base(4)),
            List.of(3L)),
        Arguments.of(
            "status knows a higher version",
            WHOLE_V3,
            40L,
            9L,
            DELTAS,
            Kind.DELTA,
            10L,
            Set.of(Part.base(3), Part.delta(10)),
            List.of()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("kinds")
  void kindVersionAndParts(
      String name,
      Manifest published,
      long deltaSize,
      long lastKnown,
      DeltaPolicy policy,
      Kind kind,
      long version,
      Set<Part> names,
      List<Long> superseded)
      throws Exception {
    PublishPlan plan =
        PublishPlan.plan(published, facts(deltaSize), policy, Budget.unlimited(), lastKnown, NOW);

    assertThat(plan.kind()).isEqualTo(kind);
    assertThat(plan.version()).isEqualTo(version);
    assertThat(plan.names()).containsExactlyInAnyOrderElementsOf(names);
    assertThat(plan.superseded()).containsExactlyElementsOf(superseded);
    assertThat(plan.newVersion()).isTrue();
  }

  @Test
  void anIdenticalPayloadOnlyConfirmsAndAsksNoBudget() throws Exception {
    BloomFilterBits same = bits("a", 100);
    Manifest published = whole(3, NOW.minusSeconds(60), same);
    Facts facts =
        new Facts(SnapshotEncoder.payloadSize(same), SnapshotEncoder.sha256(same), CHUNK, -1, null);

    PublishPlan plan =
        PublishPlan.plan(
            published,
            facts,
            DELTAS,
            new Budget(
                "ns",
                1,
                () -> {
                  throw new AssertionError("a confirm writes nothing new");
                }),
            3,
            NOW);

    assertThat(plan.kind()).isEqualTo(Kind.CONFIRM);
    assertThat(plan.newVersion()).isFalse();
    assertThat(plan.version()).isEqualTo(3);
    assertThat(plan.names()).containsExactly(Part.base(3));
    assertThat(plan.writtenBytes()).isZero();
  }

  @Test
  void anIdenticalPayloadThatMovesToAnotherStoreIsWrittenAgainThere() throws Exception {
    BloomFilterBits same = bits("a", 100);
    Manifest published = whole(3, NOW.minusSeconds(60), same);
    Facts moved =
        new Facts(
            SnapshotEncoder.payloadSize(same), SnapshotEncoder.sha256(same), CHUNK, -1, null, true);

    PublishPlan plan = PublishPlan.plan(published, moved, DELTAS, Budget.unlimited(), 3, NOW);

    assertThat(plan.kind()).isEqualTo(Kind.WHOLE);
    assertThat(plan.version()).isEqualTo(4);
    assertThat(plan.names()).containsExactly(Part.base(4));
    assertThat(plan.superseded()).containsExactly(3L);
  }

  @Test
  void storedAndWrittenBytesPerKind() throws Exception {
    long stored = NamespaceBudget.stored(WHOLE_V3);
    PublishPlan whole = PublishPlan.plan(WHOLE_V3, facts(-1), DELTAS, Budget.unlimited(), 3, NOW);
    PublishPlan delta = PublishPlan.plan(WHOLE_V3, facts(40), DELTAS, Budget.unlimited(), 3, NOW);
    PublishPlan rebase =
        PublishPlan.plan(
            CHAIN_V5, facts(40), new DeltaPolicy(2, 25, 50), Budget.unlimited(), 5, NOW);

    assertThat(whole.writtenBytes()).isEqualTo(SIZE);
    assertThat(whole.storedBytes())
        .isEqualTo(WriteBudget.Limits.cost(SIZE, chunks(SIZE) + 1) + stored);
    assertThat(delta.writtenBytes()).isEqualTo(40);
    assertThat(delta.storedBytes()).isEqualTo(stored + WriteBudget.Limits.cost(40, 1));
    assertThat(rebase.writtenBytes()).isEqualTo(SIZE + 40);
    assertThat(rebase.storedBytes())
        .isEqualTo(
            WriteBudget.Limits.cost(SIZE + 40, chunks(SIZE) + 1 + 1)
                + NamespaceBudget.stored(CHAIN_V5));
    assertThat(delta.writeCost()).isEqualTo(WriteBudget.Limits.cost(40, 2));
    assertThat(whole.writeCost()).isEqualTo(WriteBudget.Limits.cost(SIZE, chunks(SIZE) + 1));
  }

  @Test
  void theNamespaceBudgetRefusesWhatWouldNotFit() throws Exception {
    PublishPlan fits = PublishPlan.plan(null, facts(-1), DELTAS, Budget.unlimited(), 0, NOW);
    long limit = fits.storedBytes() + 1000;

    assertThat(
            PublishPlan.plan(null, facts(-1), DELTAS, new Budget("ns", limit, () -> 1000), 0, NOW)
                .kind())
        .as("exactly at the limit")
        .isEqualTo(Kind.WHOLE);
    assertThatThrownBy(
            () ->
                PublishPlan.plan(
                    null, facts(-1), DELTAS, new Budget("ns", limit, () -> 1001), 0, NOW))
        .isInstanceOfSatisfying(
            PublishException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(Reasons.NAMESPACE_QUOTA_EXCEEDED);
              assertThat(e.getMessage()).contains("namespace ns").contains("nothing was published");
            });
  }

  @Test
  void numberingStopsAtTheLastVersionEveryParserAccepts() throws Exception {
    long max = io.bloomoperator.snapshot.SnapshotVersions.MAX;
    assertThat(
            PublishPlan.plan(null, facts(-1), DELTAS, Budget.unlimited(), max - 1, NOW).version())
        .as("10^18-1 is still written")
        .isEqualTo(max);
    for (long known : new long[] {max, 2_000_000_000_000_000_000L}) {
      assertThatThrownBy(
              () -> PublishPlan.plan(null, facts(-1), DELTAS, Budget.unlimited(), known, NOW))
          .isInstanceOfSatisfying(
              PublishException.class,
              e -> assertThat(e.reason()).isEqualTo(Reasons.VERSIONS_EXHAUSTED));
    }
  }

  @Test
  void createdAtIsNowWhenThePublishedOneIsNotAhead() throws Exception {
    assertThat(createdAtAfter(null)).isEqualTo(NOW);
    assertThat(createdAtAfter(NOW.minusSeconds(1))).isEqualTo(NOW);
    assertThat(createdAtAfter(NOW)).isEqualTo(NOW);
  }

  @Test
  void createdAtNeverGoesBackBehindThePublishedOne() throws Exception {
    Instant ahead = NOW.plusSeconds(30); // the replica that published it had a faster clock
    assertThat(createdAtAfter(ahead)).isEqualTo(ahead);
  }

  @Test
  void createdAtIsNeverCopiedFromFarAhead() throws Exception {
    assertThat(createdAtAfter(NOW.plus(Duration.ofDays(365))))
        .isEqualTo(NOW.plus(OwnManifests.MAX_CLOCK_SKEW));
    assertThat(createdAtAfter(NOW.plus(OwnManifests.MAX_CLOCK_SKEW)))
        .isEqualTo(NOW.plus(OwnManifests.MAX_CLOCK_SKEW));
  }

  @Test
  void aCleanUpKeepsTheNamedPartsAndBothRolesOfRetainedVersions() {
    assertThat(PublishPlan.keep(CHAIN_V5, List.of()))
        .containsExactly(Part.base(3), Part.delta(4), Part.delta(5));
    assertThat(PublishPlan.keep(WHOLE_V3, List.of(2L)))
        .containsExactlyInAnyOrder(Part.base(3), Part.base(2), Part.delta(2));
  }

  @Test
  void aCanaryIsTheSameNewVersionAnnouncedAndSupersedesNothing() throws Exception {
    PublishPlan published =
        PublishPlan.plan(WHOLE_V3, facts(-1), DELTAS, Budget.unlimited(), 3, NOW);
    PublishPlan canary = published.asCanary(25);

    assertThat(canary.canary()).isTrue();
    assertThat(canary.canaryPercent()).isEqualTo(25);
    assertThat(canary.version()).isEqualTo(published.version()).isEqualTo(4);
    assertThat(canary.names()).isEqualTo(published.names());
    assertThat(canary.writeCost()).isEqualTo(published.writeCost());
    // manifest.json, and every version it names, stays until the canary is promoted.
    assertThat(published.superseded()).containsExactly(3L);
    assertThat(canary.superseded()).isEmpty();
    assertThat(published.canary()).isFalse();
    assertThat(published.asCanary(0)).isSameAs(published);
  }

  @Test
  void aConfirmStaysAConfirmWithACanaryShare() throws Exception {
    BloomFilterBits same = bits("a", 100);
    Facts identical =
        new Facts(SnapshotEncoder.payloadSize(same), SnapshotEncoder.sha256(same), CHUNK, -1, null);
    PublishPlan confirm =
        PublishPlan.plan(WHOLE_V3, identical, DELTAS, Budget.unlimited(), 3, NOW).asCanary(50);

    assertThat(confirm.kind()).isEqualTo(Kind.CONFIRM);
    assertThat(confirm.canary()).isFalse();
    assertThat(confirm.newVersion()).isFalse();
  }

  @Test
  void promotingSupersedesWhatTheCanaryNoLongerNames() {
    // The canary is a delta on the published chain: only a part it does not name is superseded.
    Manifest canaryOnChain = chain(CHAIN_V5, 1);
    PublishPlan onChain = PublishPlan.promote(CHAIN_V5, canaryOnChain);
    assertThat(onChain.kind()).isEqualTo(Kind.PROMOTE);
    assertThat(onChain.version()).isEqualTo(6);
    assertThat(onChain.createdAt()).isEqualTo(canaryOnChain.created());
    assertThat(onChain.target()).isSameAs(canaryOnChain);
    assertThat(onChain.superseded()).isEmpty();
    assertThat(onChain.newVersion()).isFalse();

    Manifest wholeCanary = whole(6, NOW);
    assertThat(PublishPlan.promote(CHAIN_V5, wholeCanary).superseded()).containsExactly(3L, 4L, 5L);
  }

  @Test
  void aRollBackIsTheNextNumberOverTheTargetsChainWithOneEmptyDelta() throws Exception {
    Manifest retained = whole(3, NOW.minusSeconds(600));
    PublishPlan plan = PublishPlan.rollBack(CHAIN_V5, retained, 9, CHUNK, NOW);

    assertThat(plan.kind()).isEqualTo(Kind.ROLLBACK);
    // Above the published version and above every version the status saw (a withdrawn canary).
    assertThat(plan.version()).isEqualTo(10);
    assertThat(plan.target()).isSameAs(retained);
    assertThat(plan.names()).containsExactly(Part.base(3), Part.delta(10));
    // Base 3 is named again; the published deltas are not.
    assertThat(plan.superseded()).containsExactly(4L, 5L);
    assertThat(plan.writtenBytes()).isEqualTo(SnapshotDelta.HEADER_BYTES);
    assertThat(plan.writeCost()).isEqualTo(WriteBudget.Limits.cost(SnapshotDelta.HEADER_BYTES, 2));
    assertThat(plan.createdAt()).isEqualTo(NOW);
    assertThat(plan.newVersion()).isFalse();

    assertThat(PublishPlan.rollBack(CHAIN_V5, retained, 2, CHUNK, NOW).version()).isEqualTo(6);
    assertThatThrownBy(
            () ->
                PublishPlan.rollBack(
                    CHAIN_V5, retained, io.bloomoperator.snapshot.SnapshotVersions.MAX, CHUNK, NOW))
        .isInstanceOf(PublishException.class)
        .extracting(e -> ((PublishException) e).reason())
        .isEqualTo(Reasons.VERSIONS_EXHAUSTED);
  }

  @Test
  void aRestampIsDueOnceTheSignedCreationTimeIsAnIntervalOld() {
    Duration hour = Duration.ofHours(1);
    Manifest fresh = whole(3, NOW.minusSeconds(60));
    Manifest old = whole(3, NOW.minus(hour));

    assertThat(PublishPlan.restampIfDue(fresh, hour, NOW)).isEmpty();
    assertThat(PublishPlan.restampDue(fresh, hour, NOW)).contains(hour.minusSeconds(60));
    PublishPlan restamp = PublishPlan.restampIfDue(old, hour, NOW).orElseThrow();
    assertThat(restamp.kind()).isEqualTo(Kind.RESTAMP);
    assertThat(restamp.version()).isEqualTo(3);
    assertThat(restamp.createdAt()).isEqualTo(NOW);
    assertThat(restamp.superseded()).isEmpty();
    assertThat(PublishPlan.restampDue(whole(3, NOW.minus(hour.multipliedBy(3))), hour, NOW))
        .contains(Duration.ZERO);
    // Off (no signing key, or no interval), or nothing published: never due.
    assertThat(PublishPlan.restampIfDue(old, Duration.ZERO, NOW)).isEmpty();
    assertThat(PublishPlan.restampDue(null, hour, NOW)).isEmpty();
  }

  @Test
  void withdrawAndForgetKeepThePublishedVersion() {
    for (PublishPlan plan : List.of(PublishPlan.withdraw(CHAIN_V5), PublishPlan.forget(CHAIN_V5))) {
      assertThat(plan.version()).isEqualTo(5);
      assertThat(plan.names()).isEqualTo(Part.of(CHAIN_V5));
      assertThat(plan.superseded()).isEmpty();
      assertThat(plan.writtenBytes()).isZero();
      assertThat(plan.newVersion()).isFalse();
    }
  }

  private static Instant createdAtAfter(Instant publishedAt) throws PublishException {
    Manifest published = publishedAt == null ? null : whole(3, publishedAt);
    return PublishPlan.plan(published, facts(-1), DELTAS, Budget.unlimited(), 3, NOW).createdAt();
  }

  private static Facts facts(long deltaSize) {
    return new Facts(SIZE, SHA, CHUNK, deltaSize, null);
  }

  private static long chunks(long bytes) {
    return (bytes + CHUNK - 1) / CHUNK;
  }

  private static BloomFilterBits bits(String prefix, int keys) {
    BloomFilterBits.Builder builder = BloomFilterBits.builder(KeyType.STRING, 64 * 128, 3);
    for (int i = 0; i < keys; i++) {
      builder.putString(prefix + i);
    }
    return builder.build();
  }

  private static Manifest whole(long version, Instant createdAt) {
    return whole(version, createdAt, bits("a", 100));
  }

  private static Manifest whole(long version, Instant createdAt, BloomFilterBits bits) {
    try {
      return Manifest.of(
          FILTER,
          version,
          bits,
          100,
          SnapshotEncoder.encode(bits, CHUNK, (index, data, length, sha) -> {}),
          createdAt);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  /** {@code base} with {@code deltas} small deltas appended, one version each. */
  private static Manifest chain(Manifest base, int deltas) {
    try {
      Manifest manifest = base;
      BloomFilterBits previous = bits("a", 100);
      for (int i = 1; i <= deltas; i++) {
        BloomFilterBits next = bits("a", 100 + i);
        manifest =
            Manifest.withDelta(
                manifest,
                base.version() + i,
                next,
                100 + i,
                SnapshotEncoder.sha256(next),
                SnapshotDelta.encode(previous, next, CHUNK, (index, data, length, sha) -> {}),
                base.created());
        previous = next;
      }
      return manifest;
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }
}
