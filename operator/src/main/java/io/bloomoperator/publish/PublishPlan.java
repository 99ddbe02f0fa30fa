package io.bloomoperator.publish;

import io.bloomoperator.api.ByteSizes;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.ChunkStore.Part;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotDelta;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * Every write of a filter's manifest ConfigMap, decided without touching the cluster. For a freshly
 * built filter: confirm the published version (identical payload), or write a whole new base, a
 * delta on the published chain, or a compacted chain (the published version as the new base, the
 * new version its only delta), published or announced as a canary. For the rollout: promote the
 * canary, withdraw it, roll back to a retained version. For upkeep: re-stamp the published version,
 * forget the versions whose grace period is over. The plan holds the version number and createdAt,
 * the chunk parts the manifest will name and the replaced versions retained for their grace period:
 * they are decided here and nowhere else. {@link SnapshotStore#apply} carries a plan out.
 *
 * @param kind what is written
 * @param version the version published (for {@link Kind#CONFIRM}: the published one)
 * @param createdAt the new manifest's createdAt (unused for {@link Kind#CONFIRM})
 * @param chunkSize bytes per chunk
 * @param names the chunk parts the manifest names afterwards
 * @param superseded versions whose parts the published manifest names and the new one does not:
 *     retained for the grace period from the manifest write on (empty: an earlier replacement's
 *     grace period carries on)
 * @param storedBytes what the filter's objects hold afterwards, overhead included: the new chain
 *     and the replaced one, kept for its grace period
 * @param writtenBytes the chunk bytes this publish writes
 * @param target the manifest made current: the canary for {@link Kind#PROMOTE}, the retained
 *     version for {@link Kind#ROLLBACK}; null for every other kind
 * @param canaryPercent for a new version ({@link Kind#WHOLE}, {@link Kind#DELTA}, {@link
 *     Kind#REBASE}): the share of readers it is announced to as a canary beside the published
 *     manifest; 0: it is published
 */
public record PublishPlan(
    Kind kind,
    long version,
    Instant createdAt,
    int chunkSize,
    Set<Part> names,
    List<Long> superseded,
    long storedBytes,
    long writtenBytes,
    Manifest target,
    int canaryPercent) {

  /** What a manifest write does. */
  public enum Kind {
    /** Byte-identical payload: only the build record moves on. */
    CONFIRM,
    /** A whole new base. */
    WHOLE,
    /** A delta appended to the published chain. */
    DELTA,
    /** The published version written as a new base, the new version as its only delta. */
    REBASE,
    /** The announced canary becomes the published version; its chunks exist already. */
    PROMOTE,
    /** The canary is removed from the manifest ConfigMap; {@code manifest.json} stays. */
    WITHDRAW,
    /**
     * A retained version's payload published again as a new version: its chain and one empty delta,
     * so only that delta's header is written.
     */
    ROLLBACK,
    /** The published version again with a fresh createdAt, re-signed; readers load nothing. */
    RESTAMP,
    /** The published version no longer retaining the versions it replaced. */
    FORGET
  }

  /** A plan of {@code kind} that writes no chunk and changes no version number. */
  private static PublishPlan manifestOnly(Kind kind, Manifest published, Instant createdAt) {
    return new PublishPlan(
        kind, published.version(), createdAt, 0, Part.of(published), List.of(), 0, 0, null, 0);
  }

  /**
   * The new filter, as far as planning needs it.
   *
   * @param size its whole payload's bytes
   * @param sha256 its whole payload's digest
   * @param chunkSize bytes per chunk
   * @param deltaSize the encoded delta from the published version, or -1 when the new version
   *     cannot be a delta (deltas off, another key type or geometry, a published chain that does
   *     not read back, or a delta over {@link DeltaPolicy#maxDeltaBytes})
   * @param previous the published version's verified bits the delta is computed against (null when
   *     {@code deltaSize} is -1); not used by the plan, carried to {@link SnapshotStore#apply}
   * @param moved whether the published version's chunks are in another place (ConfigMaps or another
   *     store) than the new one's: identical content is then written again in the new place
   */
  public record Facts(
      long size,
      String sha256,
      int chunkSize,
      long deltaSize,
      BloomFilterBits previous,
      boolean moved) {

    /** Facts of a version that goes where the published one is. */
    public Facts(
        long size, String sha256, int chunkSize, long deltaSize, BloomFilterBits previous) {
      this(size, sha256, chunkSize, deltaSize, previous, false);
    }
  }

  /**
   * The namespace's snapshot budget.
   *
   * @param namespace the namespace, for the refusal's message
   * @param maxBytes what every filter of the namespace may hold together
   * @param othersBytes what the other filters hold; asked only when a new version is written
   * @param retainedBytes what this filter's retained versions (spec.snapshot.keepVersions) hold
   *     beyond its published chain
   */
  public record Budget(
      String namespace, long maxBytes, LongSupplier othersBytes, long retainedBytes) {

    /** A budget for a filter that retains no superseded version. */
    public Budget(String namespace, long maxBytes, LongSupplier othersBytes) {
      this(namespace, maxBytes, othersBytes, 0);
    }

    /** No limit. */
    public static Budget unlimited() {
      return new Budget("", Long.MAX_VALUE, () -> 0);
    }
  }

  /**
   * Plans the publish of a new filter described by {@code facts}.
   *
   * @param published the trusted published manifest ({@link OwnManifests}), or null
   * @param lastKnownVersion the highest version the status reports (0: none); new versions go above
   *     it even when the manifest was deleted, so readers never see a version reused
   * @param now this operator's clock
   * @throws PublishException {@link Reasons#NAMESPACE_QUOTA_EXCEEDED} when the new version would
   *     take the namespace over its budget; {@link Reasons#VERSIONS_EXHAUSTED} when it would be
   *     above {@link io.bloomoperator.snapshot.SnapshotVersions#MAX}
   */
  public static PublishPlan plan(
      Manifest published,
      Facts facts,
      DeltaPolicy deltas,
      Budget budget,
      long lastKnownVersion,
      Instant now)
      throws PublishException {
    if (published != null
        && !facts.moved()
        && published.totalBytes() == facts.size()
        && facts.sha256().equals(published.sha256())) {
      // Byte-identical: publishing it again would only make every reader reload.
      return confirm(published, facts.chunkSize());
    }
    long version = nextVersion(published, lastKnownVersion);
    PublishPlan plan =
        write(kind(published, facts, deltas), published, facts, version, createdAt(published, now));
    checkNamespace(plan.storedBytes(), budget);
    return plan;
  }

  /**
   * The number of the next version written over {@code published} (null: none): above it and above
   * every version the status reported ({@code lastKnownVersion}), so readers never see a number
   * reused. Every new version, built or republished, is numbered here.
   */
  public static long nextVersion(Manifest published, long lastKnownVersion)
      throws PublishException {
    return VersionNumbering.next(
        Math.max(published == null ? 0 : published.version(), lastKnownVersion));
  }

  /** A delta while the chain has room, else a compaction of a chain, else a whole base. */
  private static Kind kind(Manifest published, Facts facts, DeltaPolicy deltas) {
    long delta = facts.deltaSize();
    if (published == null || delta < 0) {
      return Kind.WHOLE;
    }
    if (deltas.chainHasRoom(published, delta, facts.size())) {
      return Kind.DELTA;
    }
    return published.chained() ? Kind.REBASE : Kind.WHOLE;
  }

  /** The plan of a new version written as {@code kind}. */
  private static PublishPlan write(
      Kind kind, Manifest published, Facts facts, long version, Instant createdAt) {
    long size = facts.size();
    long delta = facts.deltaSize();
    int chunk = facts.chunkSize();
    Set<Part> names = new LinkedHashSet<>();
    long written;
    long objects;
    switch (kind) {
      case DELTA -> {
        names.addAll(Part.of(published));
        written = delta;
        objects = chunks(delta, chunk);
      }
      case REBASE -> {
        names.add(Part.base(published.version()));
        written = size + delta;
        objects = chunks(size, chunk) + chunks(delta, chunk) + 1;
      }
      default -> {
        written = size;
        objects = chunks(size, chunk) + 1;
      }
    }
    names.add(kind == Kind.WHOLE ? Part.base(version) : Part.delta(version));
    // What the filter's objects hold afterwards: the new chain, and the replaced one kept for its
    // grace period (a delta's chain is the published one plus the delta).
    long stored = WriteBudget.Limits.cost(written, objects) + stored(published);
    return new PublishPlan(
        kind,
        version,
        createdAt,
        chunk,
        names,
        superseded(published, names),
        stored,
        written,
        null,
        0);
  }

  /**
   * The published version confirmed by a rebuild of the same payload: its build record moves on,
   * readers load nothing.
   */
  public static PublishPlan confirm(Manifest published, int chunkSize) {
    return new PublishPlan(
        Kind.CONFIRM,
        published.version(),
        null,
        chunkSize,
        Part.of(published),
        List.of(),
        0,
        0,
        null,
        0);
  }

  /**
   * A whole base of {@code version} written over {@code published} (null: none), whatever a delta
   * would cost: what tools and tests publish directly.
   */
  public static PublishPlan whole(
      Manifest published, long version, int chunkSize, Instant createdAt) {
    Set<Part> names = Set.of(Part.base(version));
    return new PublishPlan(
        Kind.WHOLE,
        version,
        createdAt,
        chunkSize,
        names,
        superseded(published, names),
        0,
        0,
        null,
        0);
  }

  /**
   * This new version announced to {@code percent} % of the readers as a canary instead of
   * published: {@code manifest.json}, and with it every version it names or retains, stays as it
   * is, so the canary supersedes nothing. A confirm stays a confirm: there is no new version to
   * announce.
   */
  public PublishPlan asCanary(int percent) {
    if (!newVersion() || percent <= 0) {
      return this;
    }
    return new PublishPlan(
        kind,
        version,
        createdAt,
        chunkSize,
        names,
        List.of(),
        storedBytes,
        writtenBytes,
        null,
        percent);
  }

  /** Whether this new version is announced as a canary rather than published. */
  public boolean canary() {
    return canaryPercent > 0;
  }

  /**
   * The canary {@code canary} (trusted by the caller) published over {@code published}: its version
   * and createdAt, and what it supersedes by the same rule as any new version.
   */
  public static PublishPlan promote(Manifest published, Manifest canary) {
    Set<Part> names = Part.of(canary);
    return new PublishPlan(
        Kind.PROMOTE,
        canary.version(),
        canary.created(),
        0,
        names,
        superseded(published, names),
        0,
        0,
        canary,
        0);
  }

  /** The canary announced beside {@code published} withdrawn; nothing else changes. */
  public static PublishPlan withdraw(Manifest published) {
    return manifestOnly(Kind.WITHDRAW, published, published.created());
  }

  /**
   * {@code target}, a retained version (trusted by the caller), published again over {@code
   * published} as the next version number: its chain and one empty delta (a header, in one chunk).
   *
   * @param lastKnownVersion as for {@link #plan}
   * @throws PublishException {@link Reasons#VERSIONS_EXHAUSTED} past the highest version
   */
  public static PublishPlan rollBack(
      Manifest published, Manifest target, long lastKnownVersion, int chunkSize, Instant now)
      throws PublishException {
    long version = nextVersion(published, lastKnownVersion);
    Set<Part> names = new LinkedHashSet<>(Part.of(target));
    names.add(Part.delta(version));
    return new PublishPlan(
        Kind.ROLLBACK,
        version,
        createdAt(published, now),
        chunkSize,
        names,
        superseded(published, names),
        0,
        SnapshotDelta.HEADER_BYTES,
        target,
        0);
  }

  /**
   * A re-stamp of {@code published} when one is due: its signed createdAt is {@code interval} old
   * or older ({@link Duration#ZERO}: re-stamping is off). Readers with a maximum manifest age then
   * keep accepting a version that has not changed.
   */
  public static Optional<PublishPlan> restampIfDue(
      Manifest published, Duration interval, Instant now) {
    return restampDue(published, interval, now)
        .filter(Duration::isZero)
        .map(due -> manifestOnly(Kind.RESTAMP, published, now));
  }

  /**
   * How long until {@code published} is due for a re-stamp every {@code interval} ({@link
   * Duration#ZERO}: due now); empty when it never is (re-stamping off, nothing published).
   */
  public static Optional<Duration> restampDue(Manifest published, Duration interval, Instant now) {
    if (published == null || interval == null || interval.isZero()) {
      return Optional.empty();
    }
    Duration left = Duration.between(now, published.created().plus(interval));
    return Optional.of(left.isNegative() ? Duration.ZERO : left);
  }

  /** {@code published} retaining none of the versions it replaced: their grace period is over. */
  public static PublishPlan forget(Manifest published) {
    return manifestOnly(Kind.FORGET, published, published.created());
  }

  /**
   * What this plan writes to etcd, its objects' overhead included (the chunks and the manifest):
   * the amount charged to the {@link WriteBudget} before anything is written.
   */
  public long writeCost() {
    return WriteBudget.Limits.cost(writtenBytes, chunks(writtenBytes, chunkSize) + 1);
  }

  /** Whether a new version is built and written: a whole base, a delta or a rebase. */
  public boolean newVersion() {
    return kind == Kind.WHOLE || kind == Kind.DELTA || kind == Kind.REBASE;
  }

  /**
   * The parts to keep while versions replaced earlier are within their grace period: those the
   * manifest names and every part of the retained versions.
   */
  public static Set<Part> keep(Manifest manifest, List<Long> retained) {
    Set<Part> keep = new LinkedHashSet<>(Part.of(manifest));
    // Both roles: the previous manifest may have named a version as a delta that is now the base,
    // and readers of it may still fetch that delta.
    retained.forEach(
        v -> {
          keep.add(Part.base(v));
          keep.add(Part.delta(v));
        });
    return keep;
  }

  /**
   * Readers that trust signatures load only a manifest published after the one they serve (creation
   * time, then version): never stamp a new version earlier than the published one, even when this
   * replica's clock is behind the one that published it. Never later than this clock allows either:
   * a createdAt far ahead would be copied into every following version and make trusted readers
   * refuse them all once it is corrected.
   */
  public static Instant createdAt(Manifest published, Instant now) {
    Instant latest = now.plus(OwnManifests.MAX_CLOCK_SKEW);
    if (published == null || !published.created().isAfter(now)) {
      return now;
    }
    return published.created().isAfter(latest) ? latest : published.created();
  }

  /**
   * The versions whose parts {@code published} names and {@code after} does not name in the same
   * role: a version that was a delta and becomes the base keeps its base chunks but drops its delta
   * chunks, which readers of the published manifest may still be fetching.
   */
  public static List<Long> superseded(Manifest published, Set<Part> after) {
    List<Long> dropped = new ArrayList<>();
    if (published == null) {
      return dropped;
    }
    for (Part part : Part.of(published)) {
      if (!after.contains(part) && !dropped.contains(part.version())) {
        dropped.add(part.version());
      }
    }
    return dropped;
  }

  /** Objects {@code bytes} are cut into at {@code chunkSize} bytes per chunk. */
  public static long chunks(long bytes, int chunkSize) {
    return (bytes + chunkSize - 1) / chunkSize;
  }

  /** What a published chain holds in etcd, its objects' overhead included. */
  private static long stored(Manifest published) {
    return published == null ? 0 : NamespaceBudget.stored(published);
  }

  /** One namespace must not fill etcd for everyone. */
  private static void checkNamespace(long size, Budget budget) throws PublishException {
    if (budget.maxBytes() == Long.MAX_VALUE) {
      return;
    }
    long others = budget.othersBytes().getAsLong();
    size += budget.retainedBytes();
    if (others + size > budget.maxBytes()) {
      throw new PublishException(
          Reasons.NAMESPACE_QUOTA_EXCEEDED,
          "publishing "
              + ByteSizes.human(size)
              + " would take the snapshots of namespace "
              + budget.namespace()
              + " to "
              + ByteSizes.human(others + size)
              + ", over the operator limit of "
              + ByteSizes.human(budget.maxBytes())
              + " (BLOOM_MAX_NAMESPACE_BYTES); nothing was published",
          null);
    }
  }
}
