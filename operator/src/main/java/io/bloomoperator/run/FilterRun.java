package io.bloomoperator.run;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.ResolvedSpec;
import io.bloomoperator.changes.FilterChanges;
import io.bloomoperator.events.EventRecorder;
import io.bloomoperator.publish.SnapshotStore;
import io.bloomoperator.source.KeySource;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Instant;

/**
 * One reconcile of one BloomFilter: the resource, its resolved spec and source, the clock reading
 * every step uses, the snapshot store (fenced, stamped, on the filter's backend: the only way this
 * reconcile writes snapshots), where results go (the status draft, events) and, for a filter with
 * {@code spec.changes}, its change stream ({@code changes}, null otherwise). Built once at the
 * start of a reconcile and handed to each {@link Step} instead of a dozen collaborators.
 */
public record FilterRun(
    BloomFilter filter,
    KubernetesClient client,
    Instant now,
    ResolvedSpec spec,
    KeySource source,
    SnapshotStore store,
    StatusDraft report,
    EventRecorder events,
    FilterChanges changes) {

  /** A run of a filter without a change stream. */
  public FilterRun(
      BloomFilter filter,
      KubernetesClient client,
      Instant now,
      ResolvedSpec spec,
      KeySource source,
      SnapshotStore store,
      StatusDraft report,
      EventRecorder events) {
    this(filter, client, now, spec, source, store, report, events, null);
  }

  public String namespace() {
    return filter.getMetadata().getNamespace();
  }

  public String name() {
    return filter.getMetadata().getName();
  }

  /** This run with {@code store} (the filter's backend resolved) and {@code filter}. */
  public FilterRun on(BloomFilter filter, SnapshotStore store) {
    return new FilterRun(filter, client, now, spec, source, store, report, events, changes);
  }
}
