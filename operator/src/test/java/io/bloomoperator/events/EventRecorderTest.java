package io.bloomoperator.events;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Events as {@code kubectl describe} shows them, stamped by the clock the reconciler runs on. */
@RealKubernetes
class EventRecorderTest {

  @Test
  void eventsCarryTheReconcilersClockTime(KubernetesClient client, TestNamespace ns) {
    ConfigMap about =
        client
            .configMaps()
            .inNamespace(ns.name())
            .resource(
                new ConfigMapBuilder().withNewMetadata().withName("subject").endMetadata().build())
            .create();
    Instant at = Instant.parse("2031-02-03T04:05:06.789123456Z");
    EventRecorder events = new EventRecorder(client, Clock.fixed(at, ZoneOffset.UTC));

    events.normal(about, "Published", "version 1");
    events.warning(about, "SourceUnavailable", "try again");

    List<Event> recorded = client.v1().events().inNamespace(ns.name()).list().getItems();
    assertThat(recorded)
        .hasSize(2)
        .allSatisfy(
            e -> {
              assertThat(e.getFirstTimestamp()).isEqualTo("2031-02-03T04:05:06Z");
              assertThat(e.getLastTimestamp()).isEqualTo("2031-02-03T04:05:06Z");
              assertThat(Instant.parse(e.getEventTime().getTime()))
                  .isEqualTo(Instant.parse("2031-02-03T04:05:06.789123Z"));
              assertThat(e.getInvolvedObject().getUid()).isEqualTo(about.getMetadata().getUid());
            });
    assertThat(recorded).extracting(Event::getType).containsExactlyInAnyOrder("Normal", "Warning");
    assertThat(recorded).extracting(e -> e.getMetadata().getName()).doesNotHaveDuplicates();
  }
}
