package io.bloomoperator.runtime;

import io.bloomoperator.publish.WriteFence;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.Duration;
import java.time.ZonedDateTime;

/**
 * Allows a write only while the leader Lease names this replica and has not expired by this
 * replica's clock (the holder wrote its renewTime with the same clock, so no skew enters). One GET
 * of the Lease per check.
 */
public final class LeaseWriteFence implements WriteFence {

  private final KubernetesClient client;
  private final String namespace;
  private final String leaseName;
  private final String identity;
  private final Clock clock;

  public LeaseWriteFence(
      KubernetesClient client, String namespace, String leaseName, String identity, Clock clock) {
    this.client = client;
    this.namespace = namespace;
    this.leaseName = leaseName;
    this.identity = identity;
    this.clock = clock;
  }

  @Override
  public void check() {
    Lease lease;
    try {
      lease = client.leases().inNamespace(namespace).withName(leaseName).get();
    } catch (KubernetesClientException e) {
      throw new NotLeaderException("cannot read the Lease " + leaseName + ": " + e.getMessage());
    }
    if (lease == null || lease.getSpec() == null) {
      throw new NotLeaderException("the Lease " + leaseName + " does not exist");
    }
    if (!identity.equals(lease.getSpec().getHolderIdentity())) {
      throw new NotLeaderException("the Lease " + leaseName + " is held by another replica");
    }
    ZonedDateTime renewed = lease.getSpec().getRenewTime();
    Integer seconds = lease.getSpec().getLeaseDurationSeconds();
    if (renewed == null
        || seconds == null
        || !renewed.toInstant().plus(Duration.ofSeconds(seconds)).isAfter(clock.instant())) {
      throw new NotLeaderException("the Lease " + leaseName + " has expired");
    }
  }
}
