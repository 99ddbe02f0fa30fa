package io.bloomoperator.rollout;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.CanaryStatus;
import io.bloomoperator.api.HeldBuild;
import io.bloomoperator.snapshot.Manifest;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Whether a finished build reaches readers: a chain of one-line checks, the first that answers
 * names the hold reason. Neither the first version (readers have none to keep) nor a build whose
 * payload is the published one (confirming it writes no version) is held. A held build's chunks are
 * not written: it costs no etcd bytes while held, and releasing it builds again from the source (an
 * approval names the sha256, so only the same content is published without the guard).
 */
public final class HoldPolicies {

  private HoldPolicies() {}

  /** What the checks look at: the filter, its canary record, the published manifest, the build. */
  public record Build(
      BloomFilter filter, CanaryStatus canary, Manifest published, long keys, String sha256) {}

  /** One check: a hold reason, or empty to ask the next one. */
  @FunctionalInterface
  interface Policy {
    Optional<String> hold(Build build);
  }

  /** The checks, in order. */
  private static final List<Policy> CHAIN =
      List.of(
          b -> Canaries.withdrawnContent(b.filter(), b.canary(), b.sha256()),
          b -> RolloutGate.holdReason(b.filter(), b.published(), b.keys(), b.sha256()));

  /**
   * The record of a build held by the chain, or empty to publish it.
   *
   * @param token the source's change token the build was read at
   */
  public static Optional<HeldBuild> hold(Build build, String token, Instant now) {
    if (build.published() == null || build.sha256().equals(build.published().sha256())) {
      return Optional.empty();
    }
    Optional<String> reason =
        CHAIN.stream().map(p -> p.hold(build)).flatMap(Optional::stream).findFirst();
    return reason.map(r -> record(build, r, token, now));
  }

  private static HeldBuild record(Build build, String reason, String token, Instant now) {
    HeldBuild held = new HeldBuild();
    held.setReason(reason);
    held.setKeys(build.keys());
    held.setPublishedKeys(build.published().keyCount());
    held.setSha256(build.sha256());
    held.setBuiltAt(now.toString());
    held.setSourceToken(token);
    held.setSpecGeneration(build.filter().getMetadata().getGeneration());
    return held;
  }
}
