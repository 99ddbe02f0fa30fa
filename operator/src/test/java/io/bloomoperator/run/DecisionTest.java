package io.bloomoperator.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.run.Decision.Action;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every branch of the reconcile decision and schedule, without a cluster. */
class DecisionTest {

  private static final Instant NOW = Instant.parse("2026-11-30T12:00:00Z");
  private static final Duration REFRESH = Duration.ofMinutes(1);
  private static final Duration MIN_PUBLISH = Duration.ofSeconds(10);

  /** Published at generation 3 from token "t1", built and published {@code ago}. */
  private static Decision.Published published(Duration ago) {
    return new Decision.Published(3, "t1", NOW.minus(ago), NOW.minus(ago));
  }

  static Stream<Arguments> decisions() {
    Decision.Published fresh = published(Duration.ofSeconds(30));
    Decision.Published old = published(Duration.ofMinutes(5));
    Decision.Published justPublished = published(Duration.ofSeconds(4));
    Decision.Published noBuildRecord = new Decision.Published(3, null, null, null);
    return Stream.of(
        // what is published | token now | generation | rebuild asked | refresh | expected
        Arguments.of(
            "nothing published yet",
            null,
            "t1",
            3L,
            false,
            REFRESH,
            Action.BUILD,
            false,
            Duration.ZERO),
        Arguments.of(
            "nothing published, source without token",
            null,
            null,
            3L,
            false,
            REFRESH,
            Action.BUILD,
            false,
            Duration.ZERO),
        Arguments.of(
            "same token, same generation",
            fresh,
            "t1",
            3L,
            false,
            REFRESH,
            Action.UP_TO_DATE,
            false,
            Duration.ZERO),
        Arguments.of(
            "token changed", old, "t2", 3L, false, REFRESH, Action.BUILD, false, Duration.ZERO),
        Arguments.of(
            "spec changed", old, "t1", 4L, false, REFRESH, Action.BUILD, false, Duration.ZERO),
        Arguments.of(
            "rebuild requested, nothing changed",
            old,
            "t1",
            3L,
            true,
            REFRESH,
            Action.BUILD,
            false,
            Duration.ZERO),
        Arguments.of(
            "no token, refresh not yet due",
            fresh,
            null,
            3L,
            false,
            REFRESH,
            Action.UP_TO_DATE,
            false,
            Duration.ZERO),
        Arguments.of(
            "no token, refresh due: a routine rebuild",
            old,
            null,
            3L,
            false,
            REFRESH,
            Action.BUILD,
            true,
            Duration.ZERO),
        Arguments.of(
            "no token, no refresh (inline keys)",
            old,
            null,
            3L,
            false,
            null,
            Action.UP_TO_DATE,
            false,
            Duration.ZERO),
        Arguments.of(
            "no token, build time unknown",
            noBuildRecord,
            null,
            3L,
            false,
            REFRESH,
            Action.BUILD,
            true,
            Duration.ZERO),
        Arguments.of(
            "no token, spec changed: not routine",
            old,
            null,
            4L,
            false,
            REFRESH,
            Action.BUILD,
            false,
            Duration.ZERO),
        Arguments.of(
            "no token, rebuild asked: not routine",
            old,
            null,
            3L,
            true,
            REFRESH,
            Action.BUILD,
            false,
            Duration.ZERO),
        Arguments.of(
            "changed 4s after a publish: wait the rest",
            justPublished,
            "t2",
            3L,
            false,
            REFRESH,
            Action.WAIT,
            false,
            Duration.ofSeconds(6)),
        Arguments.of(
            "rebuild asked 4s after a publish: wait too",
            justPublished,
            "t1",
            3L,
            true,
            REFRESH,
            Action.WAIT,
            false,
            Duration.ofSeconds(6)),
        Arguments.of(
            "published 'in 2999': wait one interval at most, never until then",
            new Decision.Published(3, "t1", NOW, Instant.parse("2999-01-01T00:00:00Z")),
            "t2",
            3L,
            false,
            REFRESH,
            Action.WAIT,
            false,
            MIN_PUBLISH),
        Arguments.of(
            "up to date 4s after a publish: nothing to wait for",
            justPublished,
            "t1",
            3L,
            false,
            REFRESH,
            Action.UP_TO_DATE,
            false,
            Duration.ZERO));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("decisions")
  void decides(
      String description,
      Decision.Published published,
      String token,
      long generation,
      boolean rebuild,
      Duration refresh,
      Action action,
      boolean routine,
      Duration wait) {
    assertThat(Decision.decide(published, token, generation, rebuild, refresh, MIN_PUBLISH, NOW))
        .isEqualTo(new Decision(action, wait, routine));
  }

  @ParameterizedTest(name = "min publish interval {0}")
  @MethodSource("throttles")
  void minimumPublishIntervalSwitchesOffAtZero(Duration minPublish, Action expected) {
    assertThat(
            Decision.decide(
                    published(Duration.ofSeconds(4)), "t2", 3, false, REFRESH, minPublish, NOW)
                .action())
        .isEqualTo(expected);
  }

  static Stream<Arguments> throttles() {
    return Stream.of(
        Arguments.of(Duration.ZERO, Action.BUILD),
        Arguments.of(Duration.ofSeconds(4), Action.BUILD),
        Arguments.of(Duration.ofSeconds(5), Action.WAIT));
  }

  static Stream<Arguments> schedules() {
    Instant builtAgo40s = NOW.minusSeconds(40);
    return Stream.of(
        // refresh | has token | built at | grace left | next check
        Arguments.of(
            "token source: a full interval from now",
            REFRESH,
            true,
            builtAgo40s,
            Optional.empty(),
            Optional.of(REFRESH)),
        Arguments.of(
            "no token: an interval after the last build",
            REFRESH,
            false,
            builtAgo40s,
            Optional.empty(),
            Optional.of(Duration.ofSeconds(20))),
        Arguments.of(
            "no token, overdue: not sooner than 2s",
            REFRESH,
            false,
            NOW.minusSeconds(600),
            Optional.empty(),
            Optional.of(Duration.ofSeconds(2))),
        Arguments.of(
            "grace period ends first",
            REFRESH,
            true,
            builtAgo40s,
            Optional.of(Duration.ofSeconds(30)),
            Optional.of(Duration.ofSeconds(30))),
        Arguments.of(
            "refresh comes first",
            REFRESH,
            true,
            builtAgo40s,
            Optional.of(Duration.ofMinutes(2)),
            Optional.of(REFRESH)),
        Arguments.of(
            "inline keys, no grace: never",
            null,
            false,
            builtAgo40s,
            Optional.empty(),
            Optional.empty()),
        Arguments.of(
            "inline keys, grace running",
            null,
            false,
            builtAgo40s,
            Optional.of(Duration.ofSeconds(30)),
            Optional.of(Duration.ofSeconds(30))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("schedules")
  void schedulesTheNextCheck(
      String description,
      Duration refresh,
      boolean hasToken,
      Instant builtAt,
      Optional<Duration> grace,
      Optional<Duration> expected) {
    assertThat(Decision.nextCheck(refresh, hasToken, builtAt, grace, NOW)).isEqualTo(expected);
  }

  static Stream<Arguments> backoffs() {
    return Stream.of(
        Arguments.of("no condition yet", Optional.empty(), Duration.ofSeconds(2)),
        Arguments.of("failing for 1s", failing(Duration.ofSeconds(1)), Duration.ofSeconds(2)),
        Arguments.of("failing for 40s", failing(Duration.ofSeconds(40)), Duration.ofSeconds(40)),
        Arguments.of("failing for 3h", failing(Duration.ofHours(3)), Duration.ofMinutes(5)),
        Arguments.of(
            "ready for a day, now failing",
            Optional.of(condition("True", Duration.ofDays(1))),
            Duration.ofSeconds(2)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("backoffs")
  void backoffGrowsWithTheFailuresAge(
      String description, Optional<Condition> ready, Duration expected) {
    assertThat(Decision.backoff(ready, NOW)).isEqualTo(expected);
  }

  private static Optional<Condition> failing(Duration ago) {
    return Optional.of(condition("False", ago));
  }

  private static Condition condition(String status, Duration ago) {
    return new ConditionBuilder()
        .withType("Ready")
        .withStatus(status)
        .withLastTransitionTime(NOW.minus(ago).toString())
        .build();
  }
}
