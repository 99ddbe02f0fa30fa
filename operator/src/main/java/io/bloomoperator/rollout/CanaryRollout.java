package io.bloomoperator.rollout;

import io.bloomoperator.build.BuildAndPublish;
import io.bloomoperator.run.Decision;
import io.bloomoperator.run.FilterRun;
import io.bloomoperator.status.StatusReport;
import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.CanarySpec;
import io.bloomoperator.api.CanaryStatus;
import io.bloomoperator.api.Durations;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.publish.OwnManifests;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.publish.RetainedVersions;
import io.bloomoperator.publish.SnapshotStore;
import io.bloomoperator.readers.CanaryJudgement;
import io.bloomoperator.readers.ReaderRollouts;
import io.bloomoperator.snapshot.Manifest;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The canary step of a reconcile (spec.rollout.canary): while a canary is announced beside the
 * stable manifest, judge it from the readers' reports ({@link CanaryJudgement}) and promote it,
 * halt it, or wait; act on a promote or abort by hand. All its state is in {@code status.canary}
 * (the operator's record, which ConfigMap writers cannot change) and the manifest ConfigMap (the
 * announced canary), so a restarted operator or a new leader goes on where the last one stood; a
 * canary in the ConfigMap that does not match the record is withdrawn, never promoted.
 *
 * <p>One rollout at a time: while a canary runs, no new build starts; it is promoted or withdrawn
 * first. A withdrawn canary (halted or aborted) leaves its content's sha256 in the record, and a
 * build of the same content is held until the source changes.
 */
public final class CanaryRollout {

  /** Set to the canary's version (status.canary.version) to promote it now. */
  public static final String PROMOTE_ANNOTATION = "bloomoperator.io/canary-promote";

  /** Set to the canary's version (status.canary.version) to withdraw it. */
  public static final String ABORT_ANNOTATION = "bloomoperator.io/canary-abort";

  /** Event: a canary was announced to its share. */
  public static final String EVENT_STARTED = "CanaryStarted";

  /** Event: the canary became the published version. */
  public static final String EVENT_PROMOTED = "CanaryPromoted";

  /** Event: a canary in the manifest ConfigMap that the operator did not write was withdrawn. */
  public static final String EVENT_NOT_OURS = "CanaryNotOurs";

  private static final Logger LOG = LoggerFactory.getLogger(CanaryRollout.class);

  private final BuildAndPublish act;
  private final OwnManifests ownManifests;
  private final Supplier<ReaderRollouts> readers;
  private final Duration statusInterval;

  /**
   * @param readers the reader aggregation (null before the controller registered it)
   * @param statusInterval how often a running canary is judged
   */
  public CanaryRollout(
      BuildAndPublish act,
      OwnManifests ownManifests,
      Supplier<ReaderRollouts> readers,
      Duration statusInterval) {
    this.act = act;
    this.ownManifests = ownManifests;
    this.readers = readers;
    this.statusInterval = statusInterval;
  }

  /**
   * What the step did: {@code done} ends the reconcile; else it goes on with {@code current} (the
   * canary withdrawn or none running).
   */
  public record Step(PublishedSnapshot current, UpdateControl<BloomFilter> done) {}

  /** spec.rollout.canary, or null. */
  public static CanarySpec spec(BloomFilter filter) {
    return RolloutGate.rollout(filter).getCanary();
  }

  /** The canary share new versions go to, 1..100; 0 when no canary is configured. */
  public static int percent(BloomFilter filter) {
    CanarySpec canary = spec(filter);
    return canary == null || canary.getPercent() == null
        ? 0
        : Math.max(0, Math.min(100, canary.getPercent()));
  }

  /**
   * Checks spec.rollout.canary beyond what the schema says (an old API server without CEL rules).
   *
   * @throws IllegalArgumentException with a message naming the field
   */
  public static void validate(BloomFilter filter) {
    CanarySpec canary = spec(filter);
    if (canary == null) {
      return;
    }
    if (canary.getPercent() == null || canary.getPercent() < 1 || canary.getPercent() > 100) {
      throw new IllegalArgumentException(
          "spec.rollout.canary.percent must be a whole percent 1..100");
    }
    Duration hold;
    try {
      hold = Durations.parse(canary.getHoldFor());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("spec.rollout.canary.holdFor: " + e.getMessage());
    }
    if (hold.compareTo(Durations.parse(CanarySpec.MIN_HOLD_FOR)) < 0
        || hold.compareTo(Durations.parse(CanarySpec.MAX_HOLD_FOR)) > 0) {
      throw new IllegalArgumentException(
          "spec.rollout.canary.holdFor must be between "
              + CanarySpec.MIN_HOLD_FOR
              + " and "
              + CanarySpec.MAX_HOLD_FOR);
    }
  }

  /** The promote or abort annotation values, for the update filter. */
  public static String request(BloomFilter filter) {
    Map<String, String> annotations = filter.getMetadata().getAnnotations();
    return annotations == null
        ? null
        : annotations.get(PROMOTE_ANNOTATION) + "/" + annotations.get(ABORT_ANNOTATION);
  }

  /**
   * The hold reason for a build of {@code sha256}: while a canary is configured, the content of a
   * halted or aborted canary waits for the source to change; empty otherwise.
   */
  public static Optional<String> withdrawnContent(BloomFilter filter, CanaryStatus record, String sha256) {
    if (percent(filter) == 0
        || record == null
        || record.getSha256() == null
        || !record.getSha256().equals(sha256)) {
      return Optional.empty();
    }
    return switch (String.valueOf(record.getState())) {
      case CanaryStatus.HALTED -> Optional.of(Reasons.CANARY_HALTED);
      case CanaryStatus.ABORTED -> Optional.of(Reasons.CANARY_ABORTED);
      default -> Optional.empty();
    };
  }

  /** The record of a canary just announced. */
  public static CanaryStatus started(
      BloomFilter filter, Manifest canary, String token, Instant builtAt, Instant now) {
    CanarySpec spec = spec(filter);
    CanaryStatus record = new CanaryStatus();
    record.setState(CanaryStatus.RUNNING);
    record.setVersion(canary.version());
    record.setKeys(canary.keyCount());
    record.setSha256(canary.sha256());
    record.setManifestDigest(RetainedVersions.digest(canary));
    record.setPercent(spec.getPercent());
    record.setHoldFor(spec.getHoldFor());
    record.setSince(now.truncatedTo(ChronoUnit.MILLIS).toString());
    record.setReaders(0);
    record.setOnCanary(0);
    record.setFailing(0);
    record.setSourceToken(token);
    record.setSpecGeneration(filter.getMetadata().getGeneration());
    record.setBuiltAt(builtAt.toString());
    return record;
  }

  /** How long until a just-announced canary is judged again. */
  public Duration judgeAgain() {
    return statusInterval;
  }

  /** The Ready note of a running canary. */
  public static String note(CanaryStatus record) {
    return "; canary version "
        + record.getVersion()
        + " ("
        + record.getKeys()
        + " keys) served by "
        + record.getOnCanary()
        + "/"
        + record.getReaders()
        + " readers of its "
        + record.getPercent()
        + " % share, promoted "
        + record.getHoldFor()
        + " after "
        + record.getSince()
        + " if none fails to load it";
  }

  /**
   * The canary step; runs after the published state was observed and trusted.
   *
   * @param current the published (stable) state
   */
  public Step step(FilterRun ctx, PublishedSnapshot current) throws PublishException {
    StatusReport report = ctx.report();
    CanaryStatus record = report.canary();
    Manifest announced = SnapshotStore.canaryOf(current);
    boolean running = record != null && CanaryStatus.RUNNING.equals(record.getState());
    if (announced == null) {
      if (running) {
        // Gone from the ConfigMap (a pin published over it, or someone removed it): over.
        report.canary(null);
      }
      return new Step(current, null);
    }
    if (!running
        || record.getVersion() == null
        || record.getVersion() != announced.version()
        || !RetainedVersions.digest(announced).equals(record.getManifestDigest())) {
      String message =
          "the canary in the manifest ConfigMap is not the one this operator announced"
              + " (status.canary); it is withdrawn, never promoted";
      LOG.warn("{}/{}: {}", ctx.namespace(), ctx.name(), message);
      ctx.events().warning(ctx.filter(), EVENT_NOT_OURS, message);
      PublishedSnapshot withdrawn = withdraw(ctx, current, announced.version());
      if (running) {
        report.canary(null); // the canary it recorded is not the one announced: over as well
      }
      return new Step(withdrawn, null);
    }
    BloomFilter filter = ctx.filter();
    long version = announced.version();
    if (RolloutGate.rollout(filter).getPinVersion() != null) {
      report.canary(null);
      return new Step(withdraw(ctx, current, version), null);
    }
    if (String.valueOf(version).equals(annotation(filter, ABORT_ANNOTATION))) {
      return new Step(null, end(ctx, current, record, CanaryStatus.ABORTED, null));
    }
    if (String.valueOf(version).equals(annotation(filter, PROMOTE_ANNOTATION))) {
      return new Step(null, promote(ctx, current, announced, record, "by hand"));
    }
    ReaderRollouts aggregation = readers.get();
    // The record is the operator's own; should it be unreadable, the canary waits (never promotes
    // early) until promoted or aborted by hand.
    Instant since = parseOr(record.getSince(), ctx.now());
    Duration holdFor = holdFor(record);
    int percent = record.getPercent() == null ? 0 : record.getPercent();
    CanaryJudgement.Counts counts =
        aggregation == null
            ? new CanaryJudgement.Counts(0, 0, 0, null)
            : aggregation.canaryCounts(filter, version, percent, ctx.now());
    record.setReaders(counts.readers());
    record.setOnCanary(counts.onCanary());
    record.setFailing(counts.failing());
    record.setFailingReason(
        counts.firstFailingReason() == null ? null : counts.firstFailingReason().name());
    CanaryJudgement.Decision decision =
        aggregation == null
            ? new CanaryJudgement.Decision.Wait(0, 0)
            : aggregation.judgeCanary(filter, version, percent, since, holdFor, ctx.now());
    if (decision instanceof CanaryJudgement.Decision.Halt halt) {
      return new Step(null, end(ctx, current, record, CanaryStatus.HALTED, halt));
    }
    if (decision instanceof CanaryJudgement.Decision.Promote promote
        && !Boolean.TRUE.equals(RolloutGate.rollout(filter).getPaused())) {
      return new Step(
          null,
          promote(
              ctx,
              current,
              announced,
              record,
              "served by all "
                  + promote.canaryReaders()
                  + " readers of its share for "
                  + record.getHoldFor()
                  + " without a failure"));
    }
    report.published(current);
    Duration untilHeld = Duration.between(ctx.now(), since.plus(holdFor));
    Duration next =
        untilHeld.isNegative() || untilHeld.compareTo(statusInterval) > 0
            ? statusInterval
            : untilHeld.plusMillis(1);
    return new Step(null, report.ready(Reasons.CANARY_RUNNING, note(record), Optional.of(next)));
  }

  /** Makes the canary the published version. */
  private UpdateControl<BloomFilter> promote(
      FilterRun ctx,
      PublishedSnapshot current,
      Manifest canary,
      CanaryStatus record,
      String why)
      throws PublishException {
    PublishedSnapshot promoted =
        ctx.store()
            .promoteCanary(
                current,
                canary,
                new SnapshotStore.BuildRecord(
                    record.getSourceToken(),
                    record.getSpecGeneration() == null ? -1 : record.getSpecGeneration(),
                    parseOr(record.getBuiltAt(), ctx.now())));
    ownManifests.wrote(ctx.filter(), promoted);
    StatusReport report = ctx.report();
    report.canary(null);
    report.held(null);
    report.published(promoted);
    report.retained(RetainedVersions.of(promoted.configMap()));
    String message =
        "canary version "
            + canary.version()
            + " ("
            + canary.keyCount()
            + " keys) promoted, "
            + why
            + ": every reader loads it; version "
            + current.manifest().version()
            + " is superseded";
    LOG.info("{}/{}: {}", ctx.namespace(), ctx.name(), message);
    ctx.events().normal(ctx.filter(), EVENT_PROMOTED, message);
    return report.ready(
        Optional.of(ctx.spec().refresh() == null ? statusInterval : ctx.spec().refresh()));
  }

  /**
   * Withdraws the canary (halted or aborted): the stable version serves every reader, the record
   * keeps the content's sha256 so the same build is held.
   */
  private UpdateControl<BloomFilter> end(
      FilterRun ctx,
      PublishedSnapshot current,
      CanaryStatus record,
      String state,
      CanaryJudgement.Decision.Halt halt)
      throws PublishException {
    long version = record.getVersion();
    PublishedSnapshot stable = withdraw(ctx, current, version);
    record.setState(state);
    StatusReport report = ctx.report();
    report.canary(record);
    report.published(stable);
    Optional<Duration> next =
        Optional.of(ctx.spec().refresh() == null ? Decision.MIN_DELAY : ctx.spec().refresh());
    String served =
        "version "
            + stable.manifest().version()
            + (stable.manifest().version() == current.manifest().version()
                ? ""
                : " (the payload of version " + current.manifest().version() + ")")
            + " serves every reader";
    if (halt != null) {
      String message =
          "canary version "
              + version
              + " halted: "
              + halt.failing()
              + " of "
              + record.getReaders()
              + " readers of its "
              + record.getPercent()
              + " % share failed to load it ("
              + (halt.reason() == null ? "no reason given" : halt.reason().name())
              + "); "
              + served
              + ", and a build of the same content is held until the source changes";
      UpdateControl<BloomFilter> control = report.failed(Reasons.CANARY_HALTED, message, false);
      return next.map(control::rescheduleAfter).orElse(control);
    }
    String note = "; canary version " + version + " aborted by hand, " + served;
    ctx.events().normal(ctx.filter(), Reasons.CANARY_ABORTED, note.substring(2));
    return report.ready(Reasons.CANARY_ABORTED, note, next);
  }

  /**
   * Removes the canary {@code version} from the ConfigMap; when a reader already serves it, the
   * stable payload is published again as a new version above it (readers never go back to a lower
   * version), so the whole share comes back.
   */
  private PublishedSnapshot withdraw(FilterRun ctx, PublishedSnapshot current, long version)
      throws PublishException {
    // Readers of the share may serve it: whatever comes next is numbered above it.
    ctx.report().sawVersion(version);
    PublishedSnapshot withdrawn = ctx.store().withdrawCanary(current);
    ownManifests.wrote(ctx.filter(), withdrawn);
    ReaderRollouts aggregation = readers.get();
    if (aggregation == null || !aggregation.anyServing(ctx.filter(), version)) {
      return withdrawn;
    }
    // The stable version's own build record: its source is not the canary's, so the next build
    // finds the withdrawn content again and holds it.
    PublishedSnapshot republished =
        act.rollBack(
            ctx,
            withdrawn,
            withdrawn.manifest(),
            new SnapshotStore.BuildRecord(
                withdrawn.sourceToken(),
                withdrawn.specGeneration(),
                withdrawn.builtAt() != null ? withdrawn.builtAt() : ctx.now()));
    ctx.report().retained(RetainedVersions.of(republished.configMap()));
    LOG.info(
        "{}/{}: canary version {} withdrawn; stable payload republished as version {}",
        ctx.namespace(),
        ctx.name(),
        version,
        republished.manifest().version());
    return republished;
  }

  private static Duration holdFor(CanaryStatus record) {
    try {
      return Durations.parse(record.getHoldFor());
    } catch (IllegalArgumentException e) {
      return Durations.parse(CanarySpec.MAX_HOLD_FOR);
    }
  }

  private static String annotation(BloomFilter filter, String key) {
    Map<String, String> annotations = filter.getMetadata().getAnnotations();
    return annotations == null ? null : annotations.get(key);
  }

  private static Instant parseOr(String text, Instant fallback) {
    try {
      return text == null ? fallback : Instant.parse(text);
    } catch (RuntimeException e) {
      return fallback;
    }
  }
}
