package io.bloomoperator.run;

import io.bloomoperator.publish.PublishedSnapshot;
import io.fabric8.kubernetes.api.model.Condition;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * What one reconcile does and when the next one runs, decided from facts alone: no cluster, no
 * clock of its own, so every branch is a table row in DecisionTest.
 *
 * @param action build now, wait, or nothing to build
 * @param delay with {@link Action#WAIT}: how long until a publish is allowed
 * @param routine with {@link Action#BUILD}: an interval rebuild of a source that cannot tell
 *     whether it changed (no spec change, no rebuild request); such builds record only a Published
 *     event, so they do not flood etcd
 */
public record Decision(Action action, Duration delay, boolean routine) {

  /** Never reconcile again sooner than this, whatever the intervals say. */
  public static final Duration MIN_DELAY = Duration.ofSeconds(2);

  public static final Duration MAX_BACKOFF = Duration.ofMinutes(5);

  /** The three outcomes. */
  public enum Action {
    BUILD,
    WAIT,
    UP_TO_DATE
  }

  /**
   * What the manifest's build record says about the published version. The status is never asked:
   * it can lag behind the manifest (a lost write, a restart).
   */
  public record Published(
      long specGeneration, String sourceToken, Instant builtAt, Instant publishedAt) {

    /** The facts of a read manifest; null when no version is published. */
    public static Published of(PublishedSnapshot snapshot) {
      return snapshot == null || snapshot.manifest() == null
          ? null
          : new Published(
              snapshot.specGeneration(),
              snapshot.sourceToken(),
              snapshot.builtAt(),
              snapshot.publishedAt());
    }
  }

  /**
   * @param published the published version, or null
   * @param token the source's change token now, or null when it cannot tell
   * @param refresh the resolved refresh interval, or null
   * @param minPublishInterval the operator's shortest time between two publishes
   */
  public static Decision decide(
      Published published,
      String token,
      long generation,
      boolean rebuildRequested,
      Duration refresh,
      Duration minPublishInterval,
      Instant now) {
    if (!rebuildRequested && !stale(published, token, generation, refresh, now)) {
      return new Decision(Action.UP_TO_DATE, Duration.ZERO, false);
    }
    Instant last = published == null ? null : published.publishedAt();
    if (last != null && last.isAfter(now)) {
      // Never wait for a time the clock has not reached: at most one interval from now.
      last = now;
    }
    if (last != null && !minPublishInterval.isZero()) {
      Duration left = Duration.between(now, last.plus(minPublishInterval));
      if (left.compareTo(Duration.ZERO) > 0) {
        return new Decision(Action.WAIT, left, false);
      }
    }
    boolean routine =
        token == null
            && published != null
            && !rebuildRequested
            && published.specGeneration() == generation;
    return new Decision(Action.BUILD, Duration.ZERO, routine);
  }

  /** Whether the published version may not reflect the spec and the source. */
  private static boolean stale(
      Published published, String token, long generation, Duration refresh, Instant now) {
    if (published == null || published.specGeneration() != generation) {
      return true;
    }
    if (token != null) {
      return !token.equals(published.sourceToken());
    }
    // A source that cannot tell whether it changed is rebuilt once per refresh interval.
    return refresh != null
        && (published.builtAt() == null || !now.isBefore(published.builtAt().plus(refresh)));
  }

  /**
   * When to look again after a successful reconcile: at the next refresh (a source with a change
   * token is checked a full interval from now; one without is rebuilt an interval after its last
   * build) or when the previous version's grace period ends, whichever is first.
   */
  public static Optional<Duration> nextCheck(
      Duration refresh,
      boolean hasToken,
      Instant builtAt,
      Optional<Duration> graceLeft,
      Instant now) {
    Optional<Duration> next = graceLeft;
    if (refresh != null) {
      Duration left =
          !hasToken && builtAt != null ? Duration.between(now, builtAt.plus(refresh)) : refresh;
      left = left.compareTo(MIN_DELAY) < 0 ? MIN_DELAY : left;
      next = Optional.of(next.isPresent() && next.get().compareTo(left) < 0 ? next.get() : left);
    }
    return next;
  }

  /**
   * Retry delay after a failure, growing with how long the resource has been failing (the time
   * since Ready turned False), clamped to [2s, 5m]. Stateless, so it survives operator restarts.
   */
  public static Duration backoff(Optional<Condition> ready, Instant now) {
    Duration failingFor =
        ready
            .filter(c -> "False".equals(c.getStatus()))
            .map(c -> Duration.between(Instant.parse(c.getLastTransitionTime()), now))
            .orElse(Duration.ZERO);
    return backoff(failingFor);
  }

  /** Retry delay after a failure that has lasted {@code failingFor}, clamped to [2s, 5m]. */
  public static Duration backoff(Duration failingFor) {
    if (failingFor.compareTo(MIN_DELAY) < 0) {
      return MIN_DELAY;
    }
    return failingFor.compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : failingFor;
  }
}
