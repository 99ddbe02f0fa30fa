package io.bloomoperator.faults;

import static org.awaitility.Awaitility.await;

import io.bloomoperator.publish.ManifestWriter;
import io.bloomoperator.runtime.RuntimeOptions;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/**
 * Who led and who wrote, in etcd's order. Watches the operators' Lease and every snapshot ConfigMap
 * (manifests and chunks) of one namespace; each write carries the writer's {@value
 * ManifestWriter.ANNOTATION_PUBLISHED_BY} stamp. A Lease and a ConfigMap share etcd's revision
 * counter (their resourceVersions), so "the holder when this manifest was written" is the holder of
 * the last Lease revision below the write's: a write by anyone else came from a replica that no
 * longer (or not yet) held the Lease.
 */
final class LeaderWriteHistory implements AutoCloseable {

  /** One revision of the Lease. */
  record LeaseRecord(long revision, String holder, Instant seen) {}

  /** One write of a manifest or chunk ConfigMap. */
  record Write(
      long revision, String name, boolean manifest, long version, String by, Instant seen) {

    @Override
    public String toString() {
      return (manifest ? "manifest " : "chunk ")
          + name
          + " v"
          + version
          + " by "
          + by
          + " @"
          + revision;
    }
  }

  /** Another replica took the Lease ({@code lease}) and wrote its first manifest. */
  record Takeover(LeaseRecord lease, Write firstWrite) {}

  private final KubernetesClient client;
  private final String namespace;
  private final List<LeaseRecord> leases = new CopyOnWriteArrayList<>();
  private final List<Write> writes = new CopyOnWriteArrayList<>();
  private final List<String> watchFailures = new CopyOnWriteArrayList<>();
  private final List<Watch> watches = new ArrayList<>();
  private volatile boolean running;

  /**
   * @param namespace where the Lease (POD_NAMESPACE) and the filters are
   */
  LeaderWriteHistory(KubernetesClient client, String namespace) {
    this.client = client;
    this.namespace = namespace;
  }

  void start() {
    running = true;
    watches.add(
        client
            .leases()
            .inNamespace(namespace)
            .withName(RuntimeOptions.LEASE_NAME)
            .watch(
                watcher(
                    (Lease lease) ->
                        leases.add(
                            new LeaseRecord(
                                revision(lease),
                                lease.getSpec().getHolderIdentity(),
                                Instant.now())))));
    watches.add(
        client
            .configMaps()
            .inNamespace(namespace)
            .withLabel(SnapshotNames.LABEL_MANAGED_BY, SnapshotNames.MANAGED_BY)
            .watch(watcher(this::recordWrite)));
  }

  private void recordWrite(ConfigMap configMap) {
    var labels = configMap.getMetadata().getLabels();
    String role = labels == null ? null : labels.get(SnapshotNames.LABEL_ROLE);
    boolean manifest = SnapshotNames.ROLE_MANIFEST.equals(role);
    long version = -1;
    if (manifest) {
      try {
        version = SnapshotConfigMaps.readManifest(configMap).manifest().version();
      } catch (SnapshotVerificationException e) {
        version = -1; // the checker reports manifests that do not parse
      }
    } else if (labels != null && labels.get(SnapshotNames.LABEL_VERSION) != null) {
      version = Long.parseLong(labels.get(SnapshotNames.LABEL_VERSION));
    }
    var annotations = configMap.getMetadata().getAnnotations();
    writes.add(
        new Write(
            revision(configMap),
            configMap.getMetadata().getName(),
            manifest,
            version,
            annotations == null ? null : annotations.get(ManifestWriter.ANNOTATION_PUBLISHED_BY),
            Instant.now()));
  }

  private <T extends HasMetadata> Watcher<T> watcher(java.util.function.Consumer<T> onWrite) {
    return new Watcher<>() {
      @Override
      public void eventReceived(Action action, T object) {
        if (action == Action.ADDED || action == Action.MODIFIED) {
          onWrite.accept(object);
        }
      }

      @Override
      public void onClose(WatcherException cause) {
        if (running) {
          watchFailures.add(cause.getMessage());
        }
      }
    };
  }

  private static long revision(HasMetadata object) {
    return Long.parseLong(object.getMetadata().getResourceVersion());
  }

  /** The Lease's holder as last seen, or null before anyone took it. */
  String holder() {
    return leases.isEmpty() ? null : leases.get(leases.size() - 1).holder();
  }

  /** The holder at etcd revision {@code revision}: of the last Lease revision below it. */
  String holderAt(long revision) {
    String holder = null;
    for (LeaseRecord lease : leases) {
      if (lease.revision() < revision) {
        holder = lease.holder();
      }
    }
    return holder;
  }

  /** The first Lease revision seen after {@code after} whose holder matches. */
  Optional<LeaseRecord> firstLease(Instant after, Predicate<String> holder) {
    return leases.stream()
        .filter(l -> l.seen().isAfter(after) && holder.test(l.holder()))
        .findFirst();
  }

  /**
   * Waits until a replica other than {@code from} holds the Lease (first seen after {@code since})
   * and has written a manifest since it took it.
   */
  Takeover awaitTakeover(String from, Instant since, Duration timeout) {
    LeaseRecord lease =
        await()
            .atMost(timeout)
            .pollInterval(Duration.ofMillis(20))
            .until(() -> firstLease(since, h -> h != null && !h.equals(from)), Optional::isPresent)
            .orElseThrow();
    Write first =
        await()
            .atMost(Duration.ofSeconds(60))
            .pollInterval(Duration.ofMillis(20))
            .until(() -> firstManifestWrite(lease.revision(), lease.holder()), Optional::isPresent)
            .orElseThrow();
    return new Takeover(lease, first);
  }

  /** The first manifest write above {@code revision} stamped by {@code by}. */
  Optional<Write> firstManifestWrite(long aboveRevision, String by) {
    return writes.stream()
        .filter(w -> w.manifest() && w.revision() > aboveRevision && by.equals(w.by()))
        .findFirst();
  }

  /** Manifest writes made while the writer did not hold the Lease (or without a stamp). */
  List<Write> manifestWritesByNonHolder() {
    return writes.stream()
        .filter(w -> w.manifest() && (w.by() == null || !w.by().equals(holderAt(w.revision()))))
        .toList();
  }

  /** Chunk creates above {@code revision} stamped by {@code by}. */
  List<Write> chunkWrites(long aboveRevision, String by) {
    return writes.stream()
        .filter(w -> !w.manifest() && w.revision() > aboveRevision && by.equals(w.by()))
        .toList();
  }

  /** All writes stamped by {@code by} above {@code revision}. */
  List<Write> writesBy(String by, long aboveRevision) {
    return writes.stream().filter(w -> w.revision() > aboveRevision && by.equals(w.by())).toList();
  }

  long manifestWrites() {
    return writes.stream().filter(Write::manifest).count();
  }

  long leaseRevisions() {
    return leases.size();
  }

  List<String> watchFailures() {
    return List.copyOf(watchFailures);
  }

  @Override
  public void close() {
    running = false;
    watches.forEach(Watch::close);
  }
}
