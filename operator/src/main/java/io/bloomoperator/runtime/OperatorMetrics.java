package io.bloomoperator.runtime;

import io.bloomoperator.metrics.BuildMetrics;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.api.reconciler.RetryInfo;
import io.javaoperatorsdk.operator.processing.Controller;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.controller.ResourceAction;
import io.javaoperatorsdk.operator.processing.event.source.controller.ResourceEvent;
import java.util.Map;

/**
 * java-operator-sdk's metrics hook, passed on to its Micrometer metrics, that also removes a
 * BloomFilter's per-filter series from {@link BuildMetrics} when the BloomFilter is deleted. The
 * reconciler has no cleanup step (ownerReferences delete the snapshot, no finalizer is needed), so
 * the delete event is where the operator learns that a filter is gone.
 */
public final class OperatorMetrics implements Metrics {

  private final Metrics delegate;
  private final BuildMetrics buildMetrics;

  public OperatorMetrics(Metrics delegate, BuildMetrics buildMetrics) {
    this.delegate = delegate;
    this.buildMetrics = buildMetrics;
  }

  @Override
  public void receivedEvent(Event event, Map<String, Object> metadata) {
    // Only the controller's own events are ResourceEvents; a manifest ConfigMap's are plain Events.
    if (event instanceof ResourceEvent resourceEvent
        && resourceEvent.getAction() == ResourceAction.DELETED) {
      ResourceID id = event.getRelatedCustomResourceID();
      buildMetrics.forget(
          id.getNamespace().orElse(""),
          id.getName(),
          resourceEvent.getResource().map(r -> r.getMetadata().getUid()).orElse(null));
    }
    delegate.receivedEvent(event, metadata);
  }

  @Override
  public void controllerRegistered(Controller<? extends HasMetadata> controller) {
    delegate.controllerRegistered(controller);
  }

  @Override
  public void reconcileCustomResource(
      HasMetadata resource, RetryInfo retryInfo, Map<String, Object> metadata) {
    delegate.reconcileCustomResource(resource, retryInfo, metadata);
  }

  @Override
  public void failedReconciliation(
      HasMetadata resource, Exception exception, Map<String, Object> metadata) {
    delegate.failedReconciliation(resource, exception, metadata);
  }

  @Override
  public void reconciliationExecutionStarted(HasMetadata resource, Map<String, Object> metadata) {
    delegate.reconciliationExecutionStarted(resource, metadata);
  }

  @Override
  public void reconciliationExecutionFinished(HasMetadata resource, Map<String, Object> metadata) {
    delegate.reconciliationExecutionFinished(resource, metadata);
  }

  @Override
  public void cleanupDoneFor(ResourceID resourceID, Map<String, Object> metadata) {
    delegate.cleanupDoneFor(resourceID, metadata);
  }

  @Override
  public void finishedReconciliation(HasMetadata resource, Map<String, Object> metadata) {
    delegate.finishedReconciliation(resource, metadata);
  }

  @Override
  public <T> T timeControllerExecution(ControllerExecution<T> execution) throws Exception {
    return delegate.timeControllerExecution(execution);
  }

  @Override
  public <T extends Map<?, ?>> T monitorSizeOf(T map, String name) {
    return delegate.monitorSizeOf(map, name);
  }
}
