package io.bloomoperator.rollout;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.HeldBuild;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.api.RolloutSpec;
import io.bloomoperator.run.Outcome;
import io.bloomoperator.snapshot.Manifest;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Whether a finished build that would publish a new version reaches readers: spec.rollout paused or
 * pinned holds it, and a key count more than spec.rollout.maxKeyCountDropPercent below the
 * published version's holds it until approved. Pure: the spec, the annotations and the figures
 * decide. An approval ({@value #APPROVE_ANNOTATION}) names the held build's sha256, so it releases
 * exactly the content that was judged and never a later, different build.
 */
public final class RolloutGate {

  /** Set to {@code status.held.sha256} to publish a build held for its key count. */
  public static final String APPROVE_ANNOTATION = "bloomoperator.io/approve";

  private RolloutGate() {}

  /**
   * The reason to hold a build of {@code keys} keys with payload digest {@code sha256}, or empty to
   * publish it.
   *
   * @param published the published manifest, or null
   */
  public static Optional<String> holdReason(
      BloomFilter filter, Manifest published, long keys, String sha256) {
    if (pinVersion(filter) != null) {
      return Optional.of(Reasons.ROLLOUT_PINNED);
    }
    if (paused(filter)) {
      return Optional.of(Reasons.ROLLOUT_PAUSED);
    }
    if (dropTooLarge(rollout(filter).getMaxKeyCountDropPercent(), published, keys)
        && !sha256.equalsIgnoreCase(String.valueOf(approval(filter)))) {
      return Optional.of(Reasons.KEY_COUNT_DROPPED);
    }
    return Optional.empty();
  }

  /** Whether {@code keys} is more than {@code maxDropPercent} % below the published key count. */
  public static boolean dropTooLarge(Integer maxDropPercent, Manifest published, long keys) {
    if (maxDropPercent == null || published == null || published.keyCount() <= 0) {
      return false;
    }
    long before = published.keyCount();
    // Integer arithmetic: no rounding decides whether readers get a half-empty filter.
    return keys < before && (before - keys) * 100 > before * (long) maxDropPercent;
  }

  /** The approval annotation's value, or null. */
  public static String approval(BloomFilter filter) {
    var annotations = filter.getMetadata().getAnnotations();
    return annotations == null ? null : annotations.get(APPROVE_ANNOTATION);
  }

  /** Whether the resource carries an approval the operator has not acted on yet. */
  public static boolean approvalPending(BloomFilter filter) {
    String approval = approval(filter);
    return approval != null
        && (filter.getStatus() == null || !approval.equals(filter.getStatus().getApproved()));
  }

  /**
   * Whether the build held in the status still stands for the source as it is now, so building
   * again would read the source only to hold the same content: the same spec generation, no pending
   * rebuild request or approval, and the same source token (a source that cannot tell: held less
   * than a refresh interval ago).
   */
  public static boolean heldIsCurrent(
      BloomFilter filter, String token, Duration refresh, Instant now, boolean rebuildRequested) {
    HeldBuild held = filter.getStatus() == null ? null : filter.getStatus().getHeld();
    if (held == null
        || rebuildRequested
        || approvalPending(filter)
        || held.getSpecGeneration() == null
        || held.getSpecGeneration().longValue() != filter.getMetadata().getGeneration()) {
      return false;
    }
    if (token != null) {
      return token.equals(held.getSourceToken());
    }
    Instant builtAt = builtAt(held);
    return refresh != null && builtAt != null && now.isBefore(builtAt.plus(refresh));
  }

  /** When the held build finished, or null. */
  public static Instant builtAt(HeldBuild held) {
    try {
      return held == null || held.getBuiltAt() == null ? null : Instant.parse(held.getBuiltAt());
    } catch (java.time.format.DateTimeParseException e) {
      return null;
    }
  }

  /** spec.rollout.pinVersion: the retained version readers are pinned to, or null. */
  public static Long pinVersion(BloomFilter filter) {
    return rollout(filter).getPinVersion();
  }

  /** spec.rollout.paused: new builds are held, a running canary is not promoted. */
  public static boolean paused(BloomFilter filter) {
    return Boolean.TRUE.equals(rollout(filter).getPaused());
  }

  /** Ready=True with the published version; while pinned, saying so. */
  public static Outcome ready(BloomFilter filter, Optional<Duration> next) {
    Long pin = pinVersion(filter);
    return pin == null
        ? Outcome.ready(next)
        : new Outcome.Ready(
            Reasons.ROLLOUT_PINNED,
            "; pinned to the payload of version " + pin + ", new builds are held",
            next);
  }

  /** spec.rollout, or an empty one. */
  public static RolloutSpec rollout(BloomFilter filter) {
    RolloutSpec rollout = filter.getSpec() == null ? null : filter.getSpec().getRollout();
    return rollout == null ? new RolloutSpec() : rollout;
  }
}
