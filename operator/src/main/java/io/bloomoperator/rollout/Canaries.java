package io.bloomoperator.rollout;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.CanarySpec;
import io.bloomoperator.api.CanaryStatus;
import io.bloomoperator.api.Durations;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.publish.RetainedVersions;
import io.bloomoperator.readers.CanaryJudgement;
import io.bloomoperator.snapshot.Manifest;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Optional;

/**
 * The canary rollout's vocabulary: spec.rollout.canary, the promote and abort annotations, the
 * record in status.canary. The step that acts on it is {@link CanaryStep}. The canary step of a
 * reconcile (spec.rollout.canary): while a canary is announced beside the stable manifest, judge it
 * from the readers' reports ({@link CanaryJudgement}) and promote it, halt it, or wait; act on a
 * promote or abort by hand. All its state is in {@code status.canary} (the operator's record, which
 * ConfigMap writers cannot change) and the manifest ConfigMap (the announced canary), so a
 * restarted operator or a new leader goes on where the last one stood; a canary in the ConfigMap
 * that does not match the record is withdrawn, never promoted.
 *
 * <p>One rollout at a time: while a canary runs, no new build starts; it is promoted or withdrawn
 * first. A withdrawn canary (halted or aborted) leaves its content's sha256 in the record, and a
 * build of the same content is held until the source changes.
 */
public final class Canaries {

  private Canaries() {}

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
  public static Optional<String> withdrawnContent(
      BloomFilter filter, CanaryStatus record, String sha256) {
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

  public static Duration holdFor(CanaryStatus record) {
    try {
      return Durations.parse(record.getHoldFor());
    } catch (IllegalArgumentException e) {
      return Durations.parse(CanarySpec.MAX_HOLD_FOR);
    }
  }

  public static String annotation(BloomFilter filter, String key) {
    Map<String, String> annotations = filter.getMetadata().getAnnotations();
    return annotations == null ? null : annotations.get(key);
  }

  public static Instant parseOr(String text, Instant fallback) {
    try {
      return text == null ? fallback : Instant.parse(text);
    } catch (RuntimeException e) {
      return fallback;
    }
  }

  /** What the {@link RolloutMachine} sees of the canary {@code announced} (null: none). */
  static RolloutMachine.Canary view(BloomFilter filter, CanaryStatus record, Manifest announced) {
    boolean running = record != null && CanaryStatus.RUNNING.equals(record.getState());
    return new RolloutMachine.Canary(
        announced != null,
        running && announced != null && recordsAnnounced(record, announced),
        announced == null ? 0 : announced.version(),
        RolloutGate.pinVersion(filter) != null,
        RolloutGate.paused(filter),
        annotation(filter, ABORT_ANNOTATION),
        annotation(filter, PROMOTE_ANNOTATION));
  }

  static boolean recordsAnnounced(CanaryStatus record, Manifest announced) {
    return record.getVersion() != null
        && record.getVersion() == announced.version()
        && RetainedVersions.digest(announced).equals(record.getManifestDigest());
  }

  static String promoted(Manifest canary, String why, long superseded) {
    return "canary version "
        + canary.version()
        + " ("
        + canary.keyCount()
        + " keys) promoted, "
        + why
        + ": every reader loads it; version "
        + superseded
        + " is superseded";
  }

  static String servedBy(CanaryStatus record, CanaryJudgement.Decision.Promote promote) {
    return "served by all "
        + promote.canaryReaders()
        + " readers of its share for "
        + record.getHoldFor()
        + " without a failure";
  }

  static String halted(CanaryStatus record, CanaryJudgement.Decision.Halt halt, String served) {
    return "canary version "
        + record.getVersion()
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
  }
}
