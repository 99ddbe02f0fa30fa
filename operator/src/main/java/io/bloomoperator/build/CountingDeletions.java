package io.bloomoperator.build;

import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.changes.ChangeStream;
import io.bloomoperator.changes.CountingShadow;
import io.bloomoperator.changes.CountingShadows;
import io.bloomoperator.changes.StreamPosition;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.run.FilterRun;
import io.bloomoperator.snapshot.BitPositions;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.KeyInserter;
import java.time.Duration;
import java.time.Instant;
import java.util.function.UnaryOperator;

/**
 * {@code spec.changes.deletions: Counting}, kept out of the build and the stream publish: a full
 * build counts its keys into a new {@link CountingShadow}, which follows the version the build
 * publishes; a stream publish applies its batch to the shadow and clears the bits whose counter
 * reached 0. Whenever a delete cannot be shown to be applied exactly once it waits for the next
 * full build, as under {@code Rebuild}, and {@code status.stream.deletions} says why.
 */
final class CountingDeletions {

  /** {@code status.stream.deletions} while deletes are published by deltas. */
  static final String COUNTING = "Counting";

  /** A Warning event when a filter that counts deletes falls back to full builds. */
  static final String EVENT_COUNTING_OFF = "CountingDeletionsOff";

  private final CountingShadows shadows;

  CountingDeletions(CountingShadows shadows) {
    this.shadows = shadows;
  }

  /**
   * The counting of a full build recording the stream at {@code position} (null: none); null when
   * the filter does not count deletes (any shadow it had is dropped).
   */
  Build build(FilterRun ctx, String position) {
    String uid = ctx.filter().getMetadata().getUid();
    if (ctx.changes() == null || !ctx.changes().spec().counting()) {
      shadows.forget(uid);
      return null;
    }
    return new Build(ctx, position);
  }

  /** One full build's shadow: counted with its keys, following its version once published. */
  final class Build implements FilterBuilder.Beside {
    private final FilterRun ctx;
    private final String uid;
    private final String position;
    private CountingShadow shadow;
    private String refusal;

    private Build(FilterRun ctx, String position) {
      this.ctx = ctx;
      this.uid = ctx.filter().getMetadata().getUid();
      this.position = position;
      this.refusal = position == null ? "the full build recorded no stream position" : null;
    }

    @Override
    public UnaryOperator<KeyInserter> open(BloomFilterBits.Builder bits) {
      if (position == null) {
        shadows.forget(uid);
        return null;
      }
      // Bounded before anything is allocated; a build that refills a larger array gets a new one.
      CountingShadows.Reserved reserved =
          shadows.reserve(
              uid,
              ctx.namespace(),
              BitPositions.of(bits.format(), bits.numBits(), bits.numHashFunctions()),
              bits.keyType());
      shadow = reserved.shadow();
      refusal = reserved.refusal();
      return shadow == null ? null : shadow::counting;
    }

    /**
     * The build's version is published as {@code published} ({@code stable}: its payload is the
     * build's bits, on the stable chain) and its scan ended at {@code scanEnd}: the shadow follows
     * it, or is dropped. {@code exact}: the position is exact for the scan (a PostgreSQL exported
     * snapshot), so no delete after it can be reflected in the scan already. Returns what {@code
     * status.stream.deletions} says.
     */
    String published(
        PublishedSnapshot published,
        boolean stable,
        Instant scanEnd,
        Duration overlap,
        boolean exact) {
      if (shadow == null) {
        return off(refusal == null ? "no counting shadow was built" : refusal);
      }
      if (!stable || published == null || published.manifest() == null) {
        shadows.forget(uid);
        return off("the build was not published on the stable chain (canary or hold)");
      }
      // Kafka's position is offsetsForTimes(scan start - overlap): a delete recorded before the
      // scan ended (plus the overlap by which the stream and the source may disagree) may be
      // reflected in the scan already, its key never counted; decrementing its counters would take
      // them from other keys. PostgreSQL's consistent point is exact.
      Instant decrementFrom = exact ? null : scanEnd.plus(overlap);
      if (!shadows.follow(
          uid,
          shadow,
          StreamPosition.parse(position),
          decrementFrom,
          published.manifest().sha256())) {
        return off("the counting shadow was dropped during the build");
      }
      return COUNTING;
    }

    /** The build is not published (held): its shadow goes. */
    void discard() {
      shadows.forget(uid);
    }

    private String off(String why) {
      String text = "Rebuild until the next full build: " + why;
      ctx.events().warning(ctx.filter(), EVENT_COUNTING_OFF, text);
      return text;
    }
  }

  /**
   * What a stream batch's deletes did.
   *
   * @param shadow the shadow applied to, or null (its deletes all wait)
   * @param applied deletes whose counters were decremented
   * @param pending deletes left to the next full build
   * @param clears the filter bits to clear in this publish
   * @param state what {@code status.stream.deletions} says (null: nothing new)
   */
  record Applied(CountingShadow shadow, long applied, long pending, long[] clears, String state) {}

  /**
   * Applies {@code batch}, read from {@code current}'s position, to the filter's shadow when it
   * follows {@code current}; otherwise its deletes are pending.
   */
  Applied apply(FilterRun ctx, PublishedSnapshot current, ChangeStream.Batch batch) {
    if (ctx.changes() == null || !ctx.changes().spec().counting()) {
      return new Applied(null, 0, batch.deletes(), new long[0], null);
    }
    String uid = ctx.filter().getMetadata().getUid();
    CountingShadow shadow = shadows.of(uid);
    if (shadow == null) {
      return new Applied(
          null,
          0,
          batch.deletes(),
          new long[0],
          "Rebuild until the next full build: no counting shadow in this operator process"
              + " (restarted, a new leader, or refused)");
    }
    if (!shadow.follows(current.manifest().sha256())) {
      // Another writer (a rollback, a pin, another process) published since: what the shadow
      // counted is not what is served.
      shadows.forget(uid);
      return new Applied(
          null,
          0,
          batch.deletes(),
          new long[0],
          "Rebuild until the next full build: the published version is not the one the counting"
              + " shadow follows");
    }
    CountingShadow.Applied applied = shadow.apply(batch.adds(), batch.deleted(), batch.next());
    // Deletes whose key the stream did not give, and those deferred, wait for the full build;
    // skipped ones were applied before, absent ones changed nothing.
    long keyless = batch.deletes() - batch.deleted().size();
    long pending = keyless + applied.deferred();
    return new Applied(
        shadow,
        applied.removed(),
        pending,
        shadow.clears(),
        keyless > 0
            ? "Rebuild until the next full build: this stream does not give the keys of deleted"
                + " rows (postgresLogical)"
            : COUNTING);
  }

  /** {@code applied}'s clears are in the version of payload {@code sha256}, now published. */
  static void published(Applied applied, String sha256) {
    if (applied.shadow() != null) {
      applied.shadow().published(sha256);
    }
  }

  /** Drops the shadow of a filter that is gone or no longer counts. */
  void forget(String uid) {
    shadows.forget(uid);
  }
}
