package io.bloomoperator.publish;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Optional;

/**
 * A {@link ManifestWriter} that charges every manifest ConfigMap write to the filter's etcd {@link
 * WriteBudget} before making it, at the size of the object written ({@link WriteBudget.Limits#cost}
 * of its JSON): publishes, canary announcements, promotions and withdrawals, roll-backs,
 * build-record confirmations, the janitor's rewrites and re-stamps alike, in ConfigMap mode and
 * object-store mode. With {@code keepVersions} a manifest ConfigMap holds up to ~300 KB, and etcd
 * keeps every revision of it until compaction.
 *
 * <p>A write that does not fit is not made: it fails with a {@link Refused} (HTTP 429), which the
 * writes that are only bookkeeping treat like a conflict (tried again by a later reconcile) and a
 * publish reports as {@link WriteBudgetExceeded} ({@link PublishFailures}).
 */
final class ChargedManifests implements ManifestWriter {

  /** A manifest write the write budget refused; carries the refusal to report. */
  static final class Refused extends KubernetesClientException {
    private final transient WriteBudgetExceeded refusal;

    Refused(WriteBudgetExceeded refusal) {
      super(refusal.getMessage(), 429, null);
      this.refusal = refusal;
    }

    WriteBudgetExceeded refusal() {
      return refusal;
    }
  }

  private final ManifestWriter inner;
  private final WriteBudget budget;
  private final String namespace;
  private final String filter;
  private final Clock clock;

  ChargedManifests(
      ManifestWriter inner, WriteBudget budget, String namespace, String filter, Clock clock) {
    this.inner = inner;
    this.budget = budget;
    this.namespace = namespace;
    this.filter = filter;
    this.clock = clock;
  }

  @Override
  public ConfigMap write(ConfigMap desired) {
    long bytes =
        WriteBudget.Limits.cost(
            Serialization.asJson(desired).getBytes(StandardCharsets.UTF_8).length, 1);
    Optional<WriteBudget.Refusal> refused =
        budget.charge(namespace, filter, bytes, clock.instant());
    if (refused.isPresent()) {
      throw new Refused(WriteBudgetExceeded.of(refused.get(), bytes));
    }
    return inner.write(desired);
  }
}
