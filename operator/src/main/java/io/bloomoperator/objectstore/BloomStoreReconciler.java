package io.bloomoperator.objectstore;

import io.bloomoperator.api.BloomStore;
import io.bloomoperator.api.BloomStoreStatus;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.events.EventRecorder;
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
 *
 * <p>Also keeps the {@value SharedLocations#CONDITION} condition: True, with a Warning event on the
 * stores concerned, while another BloomStore has the same location or a nested one ({@link
 * SharedLocations}, flagged rather than refused for the reasons given there).
 */
@ControllerConfiguration(name = BloomStoreReconciler.NAME)
public class BloomStoreReconciler implements Reconciler<BloomStore> {

  public static final String NAME = "bloomstore";

  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(BloomStoreReconciler.class);

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
    List<BloomStore> all = context.getPrimaryCache().list().toList();
    SharedLocations.Overlap overlap = SharedLocations.of(store, all);
    flagIfNew(context, store, overlap, all);
    refreshPartners(context, store, overlap, all);
    BloomStoreStatus status = new BloomStoreStatus();
    status.setObservedGeneration(store.getMetadata().getGeneration());
    status.setConditions(
        List.of(
            condition(store, "Ready", ready, reason, message, clock.instant()),
            condition(
                store,
                SharedLocations.CONDITION,
                overlap.shared(),
                overlap.reason(),
                overlap.message(),
                clock.instant())));
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

  /**
   * A Warning event on {@code store} and on each store it shares its location with, when the
   * overlap is new or its partners changed (the condition's message says which); the partners'
   * conditions follow at once ({@link #refreshPartners}).
   */
  private void flagIfNew(
      Context<BloomStore> context,
      BloomStore store,
      SharedLocations.Overlap overlap,
      List<BloomStore> all) {
    Condition previous = previous(store, SharedLocations.CONDITION);
    if (!overlap.shared()
        || previous != null
            && "True".equals(previous.getStatus())
            && overlap.message().equals(previous.getMessage())) {
      return;
    }
    EventRecorder events = new EventRecorder(context.getClient(), clock);
    events.warning(store, SharedLocations.EVENT, overlap.message());
    String name = store.getMetadata().getName();
    for (BloomStore other : all) {
      if (overlap.others().contains(other.getMetadata().getName())) {
        events.warning(
            other,
            SharedLocations.EVENT,
            "BloomStore "
                + name
                + " was defined at a location this store shares (same endpoint and bucket, equal"
                + " or nested prefix); see docs/object-store.md");
      }
    }
  }

  /**
   * Brings the {@value SharedLocations#CONDITION} condition of each store {@code store} overlaps up
   * to date now rather than at its next check: a store defined at an existing store's location
   * flags both at once. Only stores that have a status already (their own reconcile writes the
   * first); their Ready condition is kept as it is.
   */
  private void refreshPartners(
      Context<BloomStore> context,
      BloomStore store,
      SharedLocations.Overlap overlap,
      List<BloomStore> all) {
    for (BloomStore other : all) {
      if (!overlap.others().contains(other.getMetadata().getName())) {
        continue;
      }
      Condition ready = previous(other, "Ready");
      Condition shared = previous(other, SharedLocations.CONDITION);
      SharedLocations.Overlap theirs = SharedLocations.of(other, all);
      if (ready == null
          || shared != null
              && "True".equals(shared.getStatus())
              && theirs.message().equals(shared.getMessage())) {
        continue;
      }
      BloomStoreStatus status = new BloomStoreStatus();
      status.setObservedGeneration(other.getStatus().getObservedGeneration());
      status.setConditions(
          List.of(
              ready,
              condition(
                  other,
                  SharedLocations.CONDITION,
                  theirs.shared(),
                  theirs.reason(),
                  theirs.message(),
                  clock.instant())));
      BloomStore patch = new BloomStore();
      patch.setMetadata(
          new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
              .withName(other.getMetadata().getName())
              .build());
      patch.setStatus(status);
      try {
        context.getClient().resources(BloomStore.class).resource(patch).patchStatus();
      } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
        // Its own next check writes it.
        LOG.debug(
            "status of BloomStore {} not updated: {}",
            other.getMetadata().getName(),
            e.getMessage());
      }
    }
  }

  private static boolean sameStatus(BloomStoreStatus old, BloomStoreStatus now) {
    if (old == null
        || old.getConditions() == null
        || old.getConditions().size() != now.getConditions().size()
        || !java.util.Objects.equals(old.getObservedGeneration(), now.getObservedGeneration())) {
      return false;
    }
    for (int i = 0; i < now.getConditions().size(); i++) {
      Condition a = old.getConditions().get(i);
      Condition b = now.getConditions().get(i);
      if (!java.util.Objects.equals(a.getType(), b.getType())
          || !java.util.Objects.equals(a.getStatus(), b.getStatus())
          || !java.util.Objects.equals(a.getReason(), b.getReason())
          || !java.util.Objects.equals(a.getMessage(), b.getMessage())) {
        return false;
      }
    }
    return true;
  }

  private static Condition previous(BloomStore store, String type) {
    return store.getStatus() == null || store.getStatus().getConditions() == null
        ? null
        : store.getStatus().getConditions().stream()
            .filter(c -> type.equals(c.getType()))
            .findFirst()
            .orElse(null);
  }

  private static Condition condition(
      BloomStore store, String type, boolean ready, String reason, String message, Instant now) {
    Condition previous = previous(store, type);
    String status = ready ? "True" : "False";
    String since =
        previous != null && status.equals(previous.getStatus())
            ? previous.getLastTransitionTime()
            : now.truncatedTo(ChronoUnit.SECONDS).toString();
    return new ConditionBuilder()
        .withType(type)
        .withStatus(status)
        .withReason(reason)
        .withMessage(message)
        .withObservedGeneration(store.getMetadata().getGeneration())
        .withLastTransitionTime(since)
        .build();
  }
}
