package io.bloomoperator.status;

import io.bloomoperator.api.BloomFilterStatus;
import io.bloomoperator.api.BuildAttempt;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Instant;

/**
 * The build-attempt record in the status ({@code status.buildAttempt}): started before the source
 * is read, finished by the status write that ends the build, so an unfinished one after a restart
 * is a build that killed the operator ({@code build.BuildCrashes}).
 */
final class BuildAttempts {

  private BuildAttempts() {}

  /**
   * A build starts at {@code now}: its record, which the caller writes before the source is read.
   */
  static BuildAttempt starting(BloomFilterStatus status, Instant now) {
    BuildAttempt attempt = attempt(status);
    attempt.setStartedAt(now.toString());
    if (attempt.getCrashes() == null) {
      attempt.setCrashes(0);
    }
    return Serialization.clone(attempt);
  }

  /** The unfinished record found after a restart, finished: {@code crashes} in a row. */
  static void crashed(BloomFilterStatus status, Instant now, int crashes, Instant retryAfter) {
    BuildAttempt attempt = attempt(status);
    attempt.setFinishedAt(now.toString());
    attempt.setCrashes(crashes);
    attempt.setRetryAfter(retryAfter.toString());
  }

  /** A build that ends with this write, whatever its outcome, is no crash: finish its record. */
  static void finish(BloomFilterStatus status, Instant now) {
    BuildAttempt attempt = status.getBuildAttempt();
    if (attempt == null || attempt.getStartedAt() == null) {
      return;
    }
    String finished = attempt.getFinishedAt();
    boolean open;
    try {
      open =
          finished == null
              || Instant.parse(finished).isBefore(Instant.parse(attempt.getStartedAt()));
    } catch (java.time.format.DateTimeParseException e) {
      open = true; // not the operator's writing: replace it
    }
    if (open) {
      attempt.setFinishedAt(now.toString());
      attempt.setCrashes(0);
    }
  }

  private static BuildAttempt attempt(BloomFilterStatus status) {
    if (status.getBuildAttempt() == null) {
      status.setBuildAttempt(new BuildAttempt());
    }
    return status.getBuildAttempt();
  }
}
