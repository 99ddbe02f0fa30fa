package io.bloomoperator.objectstore;

import io.bloomoperator.api.BloomStore;
import io.bloomoperator.api.BloomStoreStatus;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.publish.PublishException;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import software.amazon.awssdk.core.exception.SdkException;

/**
 * Keeps each {@link BloomStore}'s Ready condition: True while the operator reaches the bucket with
 * the store's credentials (a HEAD of the bucket), False with a reason otherwise. Checked on every
 * change of the store and every few minutes, so administrators see a store that went down before a
 * publish fails.
 */
@ControllerConfiguration(name = BloomStoreReconciler.NAME)
public class BloomStoreReconciler implements Reconciler<BloomStore> {

  public static final String NAME = "bloomstore";

  /** How often a store's reachability is checked again. */
  static final Duration RECHECK = Duration.ofMinutes(5);

  private final ObjectStores stores;
  private final Clock clock;

  public BloomStoreReconciler(ObjectStores stores, Clock clock) {
    this.stores = stores;
    this.clock = clock;
  }

  /** Whether this operator may list BloomStores (their CRD is installed and RBAC allows it). */
  public static boolean canWatch(io.fabric8.kubernetes.client.KubernetesClient client) {
    try {
      client
          .resources(BloomStore.class)
          .list(new io.fabric8.kubernetes.api.model.ListOptionsBuilder().withLimit(1L).build());
      return true;
    } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
      return false;
    }
  }

  @Override
  public UpdateControl<BloomStore> reconcile(BloomStore store, Context<BloomStore> context) {
    String reason;
    String message;
    boolean ready = false;
    try {
      ObjectStores.Store connected = stores.connect(context.getClient(), store);
      connected.client().headBucket(b -> b.bucket(store.getSpec().getBucket()));
      ready = true;
      reason = "Reachable";
      message = "the bucket answers the operator's credentials";
    } catch (PublishException e) {
      reason = e.reason();
      message = e.getMessage();
    } catch (SdkException e) {
      // Administrators read this status: the SDK's class and status code say enough, and the
      // operator log has the rest.
      reason = Reasons.STORE_UNAVAILABLE;
      message =
          "HEAD of the bucket failed: "
              + StoreFailures.why(e)
                  .orElseGet(
                      () ->
                          e.getClass().getSimpleName()
                              + (e
                                      instanceof
                                      software.amazon.awssdk.awscore.exception.AwsServiceException s
                                  ? " (HTTP " + s.statusCode() + ")"
                                  : ""));
    }
    BloomStoreStatus status = new BloomStoreStatus();
    status.setObservedGeneration(store.getMetadata().getGeneration());
    status.setConditions(List.of(condition(store, ready, reason, message, clock.instant())));
    BloomStore patch = new BloomStore();
    patch.setMetadata(
        new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
            .withName(store.getMetadata().getName())
            .build());
    patch.setStatus(status);
    if (sameStatus(store.getStatus(), status)) {
      return UpdateControl.<BloomStore>noUpdate().rescheduleAfter(RECHECK);
    }
    return UpdateControl.patchStatus(patch).rescheduleAfter(RECHECK);
  }

  private static boolean sameStatus(BloomStoreStatus old, BloomStoreStatus now) {
    if (old == null || old.getConditions() == null || old.getConditions().isEmpty()) {
      return false;
    }
    Condition a = old.getConditions().get(0);
    Condition b = now.getConditions().get(0);
    return java.util.Objects.equals(old.getObservedGeneration(), now.getObservedGeneration())
        && a.getStatus().equals(b.getStatus())
        && a.getReason().equals(b.getReason())
        && java.util.Objects.equals(a.getMessage(), b.getMessage());
  }

  private static Condition condition(
      BloomStore store, boolean ready, String reason, String message, Instant now) {
    Condition previous =
        store.getStatus() == null || store.getStatus().getConditions() == null
            ? null
            : store.getStatus().getConditions().stream()
                .filter(c -> "Ready".equals(c.getType()))
                .findFirst()
                .orElse(null);
    String status = ready ? "True" : "False";
    String since =
        previous != null && status.equals(previous.getStatus())
            ? previous.getLastTransitionTime()
            : now.truncatedTo(ChronoUnit.SECONDS).toString();
    return new ConditionBuilder()
        .withType("Ready")
        .withStatus(status)
        .withReason(reason)
        .withMessage(message)
        .withObservedGeneration(store.getMetadata().getGeneration())
        .withLastTransitionTime(since)
        .build();
  }
}
