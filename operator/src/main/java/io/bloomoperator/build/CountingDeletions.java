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

  /** What {@code status.stream.deletions} says before why deletes wait. */
  static final String OFF = "Rebuild until the next full build: ";

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
      shadows.gone(uid);
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
    public UnaryOperator<KeyInserter> open(BloomFilterBits.Builder bits, long keys) {
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
              bits.keyType(),
              keys);
      shadow = reserved.shadow();
      refusal = reserved.refusal();
      return shadow == null ? null : shadow::counting;
    }

    /**
     * The build's version is published as {@code published} ({@code stable}: its payload is the
     * build's bits, on the stable chain): the shadow follows it, or is dropped. Returns what {@code
     * status.stream.deletions} says.
     *
     * <p>No time decides which deletes are safe any more (record timestamps are the producer's): a
     * delete whose row the scan no longer saw finds no counted occurrence of its key and waits, and
     * one the scan did see takes the occurrence the scan counted.
     */
    String published(PublishedSnapshot published, boolean stable) {
      if (shadow == null) {
        return off(refusal == null ? "no counting shadow was built" : refusal);
      }
      if (!stable || published == null || published.manifest() == null) {
        shadows.forget(uid);
        return off("the build was not published on the stable chain (canary or hold)");
      }
      if (shadow.stopped() != null) {
        shadows.forget(uid);
        return off(shadow.stopped());
      }
      if (!shadows.follow(
          uid, shadow, StreamPosition.parse(position), published.manifest().sha256())) {
        return off("the counting shadow was dropped during the build");
      }
      return COUNTING;
    }

    /** The build is not published (held): its shadow goes. */
    void discard() {
      shadows.forget(uid);
    }

    private String off(String why) {
      String text = OFF + why;
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
      String stopped = shadows.stoppedWhy(uid);
      return new Applied(
          null,
          0,
          batch.deletes(),
          new long[0],
          OFF
              + (stopped != null
                  ? stopped
                  : "no counting shadow in this operator process (restarted, a new leader, or"
                      + " refused)"));
    }
    if (!shadow.follows(current.manifest().sha256())) {
      // Another writer (a rollback, a pin, another process) published since: what the shadow
      // counted is not what is served.
      return stop(uid, batch, "the published version is not the one the counting shadow follows");
    }
    String unordered = unordered(shadow, batch);
    if (unordered != null) {
      return stop(uid, batch, unordered);
    }
    CountingShadow.Applied applied = shadow.apply(batch.adds(), batch.deleted(), batch.next());
    if (applied.stopped() != null) {
      return stop(uid, batch, applied.stopped()); // what it counted of this batch goes with it
    }
    // Deletes whose key the stream did not give, and those not counted or not ordered, wait for
    // the full build; skipped ones were applied before.
    long keyless = batch.deletes() - batch.deleted().size();
    long pending = keyless + applied.waiting();
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

  /** Drops filter {@code uid}'s shadow because of {@code why}: {@code batch}'s deletes all wait. */
  private Applied stop(String uid, ChangeStream.Batch batch, String why) {
    shadows.stop(uid, why);
    return new Applied(null, 0, batch.deletes(), new long[0], OFF + why);
  }

  /**
   * Why {@code batch} cannot be applied to {@code shadow} in order, or null: an add whose key may
   * have events in other partitions (its later delete could then be applied although the scan
   * reflects a re-add), or a topic whose partition count changed since the full build (the default
   * partitioner's choice for a key moved).
   */
  private static String unordered(CountingShadow shadow, ChangeStream.Batch batch) {
    if (batch.unorderedAdds() > 0) {
      return batch.unorderedAdds()
          + " add record(s) not keyed by their ID on the default partitioner's partition"
          + " (docs/changes.md, the ordering rule)";
    }
    if (shadow.partitions() > 0 && batch.next().offsets().size() != shadow.partitions()) {
      return "the topic's partition count changed since the full build";
    }
    return null;
  }

  /** {@code applied}'s clears are in the version of payload {@code sha256}, now published. */
  static void published(Applied applied, String sha256) {
    if (applied.shadow() != null) {
      applied.shadow().published(sha256);
    }
  }

  /** Drops the shadow of a filter that is gone or no longer counts. */
  void forget(String uid) {
    shadows.gone(uid);
  }
}
