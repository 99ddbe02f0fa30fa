package io.bloomoperator.snapshot;

import java.util.Objects;

/**
 * A canary announced beside the stable manifest: a newer manifest (with its signature, checked by
 * each reader exactly as the stable one) that only the readers in the {@link CanaryShare} of {@code
 * percent} % load. The share itself is not signed: whoever may write the manifest ConfigMap can
 * already announce any signed manifest of the namespace to every reader, so a changed share grants
 * nothing more.
 *
 * @param announced the canary manifest, its exact JSON and its signature
 * @param percent the share, 1..100
 */
public record AnnouncedCanary(AnnouncedManifest announced, int percent) {

  public AnnouncedCanary {
    Objects.requireNonNull(announced, "announced");
    if (percent < 1 || percent > CanaryShare.BUCKETS) {
      throw new IllegalArgumentException("canary share must be 1..100 %, was " + percent);
    }
  }

  /** Whether the reader in pod {@code podName} serves this canary. */
  public boolean includes(String podName) {
    return CanaryShare.contains(podName, percent);
  }
}
