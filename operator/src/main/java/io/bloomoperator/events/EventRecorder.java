package io.bloomoperator.events;

import io.bloomoperator.publish.StorageFull;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.MicroTime;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Emits core/v1 Events about a resource, shown by {@code kubectl describe} and {@code kubectl get
 * events}. An event that cannot be written is logged, never fatal: events are for humans, the
 * status is the contract.
 */
public final class EventRecorder {

  public static final String COMPONENT = "bloom-operator";
  private static final Logger LOG = LoggerFactory.getLogger(EventRecorder.class);
  private static final AtomicLong SEQUENCE = new AtomicLong();

  private final KubernetesClient client;
  private final Clock clock;

  /**
   * @param clock stamps each event (and makes its name unique); the reconciler's own clock
   */
  public EventRecorder(KubernetesClient client, Clock clock) {
    this.client = client;
    this.clock = clock;
  }

  public void normal(HasMetadata about, String reason, String message) {
    emit(about, "Normal", reason, message);
  }

  public void warning(HasMetadata about, String reason, String message) {
    emit(about, "Warning", reason, message);
  }

  private void emit(HasMetadata about, String type, String reason, String message) {
    Instant now = clock.instant();
    String stamp = now.truncatedTo(ChronoUnit.SECONDS).toString();
    // Events about cluster-scoped objects (BloomStores) live in "default", as kubectl expects.
    String namespace =
        about.getMetadata().getNamespace() == null ? "default" : about.getMetadata().getNamespace();
    String name =
        about.getMetadata().getName()
            + "."
            + Long.toHexString(now.toEpochMilli() * 1000 + SEQUENCE.incrementAndGet() % 1000);
    try {
      client
          .v1()
          .events()
          .inNamespace(namespace)
          .resource(
              new EventBuilder()
                  .withNewMetadata()
                  .withName(name)
                  .withNamespace(namespace)
                  .endMetadata()
                  .withNewInvolvedObject()
                  .withApiVersion(about.getApiVersion())
                  .withKind(about.getKind())
                  .withName(about.getMetadata().getName())
                  .withNamespace(about.getMetadata().getNamespace())
                  .withUid(about.getMetadata().getUid())
                  .endInvolvedObject()
                  .withType(type)
                  .withReason(reason)
                  .withMessage(message.length() > 1024 ? message.substring(0, 1024) : message)
                  .withFirstTimestamp(stamp)
                  .withLastTimestamp(stamp)
                  .withEventTime(new MicroTime(now.truncatedTo(ChronoUnit.MICROS).toString()))
                  .withCount(1)
                  .withReportingComponent(COMPONENT)
                  .withReportingInstance(COMPONENT)
                  .withAction(reason)
                  .withNewSource()
                  .withComponent(COMPONENT)
                  .endSource()
                  .build())
          .create();
    } catch (KubernetesClientException e) {
      if (StorageFull.causedBy(e)) {
        // The reconciler reports a full etcd itself; this would be a second, longer line.
        LOG.debug(
            "event {} on {} not recorded: etcd is out of space",
            reason,
            about.getMetadata().getName());
        return;
      }
      LOG.warn(
          "could not record event {} on {}: {}",
          reason,
          about.getMetadata().getName(),
          e.getMessage());
    }
  }
}
