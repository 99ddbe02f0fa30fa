package io.bloomoperator.watch;

import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.ReaderReport;
import io.bloomoperator.snapshot.ReaderReports;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.HttpURLConnection;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the operator which version this pod serves (docs/reader-protocol.md): writes the pod's
 * reader report Lease at start, after each swap, when a newer version starts or stops failing, and
 * as a jittered heartbeat, all on the watcher thread (one write at a time, never on the lookup
 * path, and gone with the thread when the filter is closed).
 *
 * <p>Reporting is optional: refused by the API server (no RBAC rule for Leases), it stops for good
 * and says so once; the filter works as without it. Other failures are retried at the next
 * heartbeat.
 */
final class ReaderReporter implements BloomFilterListener {

  private static final Logger LOG = LoggerFactory.getLogger(ReaderReporter.class);

  private final KubernetesClient client;
  private final PodIdentity pod;
  private final String namespace;
  private final String filterName;
  private final WatcherThread thread;
  private final Duration heartbeat;
  private final DoubleSupplier jitter;
  private final Clock clock;

  // Confined to the watcher thread.
  private long served = ReaderReport.NONE;
  private Instant loadedAt;
  private long failingVersion = ReaderReport.NONE;
  private LoadFailureReason failingReason;
  private String resourceVersion; // of the last write; null: create (or read) first
  private boolean refused;

  ReaderReporter(
      KubernetesClient client,
      PodIdentity pod,
      String namespace,
      String filterName,
      WatcherThread thread,
      Duration heartbeat,
      DoubleSupplier jitter,
      Clock clock) {
    this.client = client;
    this.pod = pod;
    this.namespace = namespace;
    this.filterName = filterName;
    this.thread = thread;
    this.heartbeat = heartbeat;
    this.jitter = jitter;
    this.clock = clock;
  }

  /** A reader is counted from its start, before it serves anything. */
  void start() {
    thread.execute(this::write);
    scheduleHeartbeat();
  }

  @Override
  public void onUpdate(long oldVersion, long newVersion, Duration loadDuration) {
    served = newVersion;
    loadedAt = clock.instant();
    if (failingVersion != ReaderReport.NONE && failingVersion <= newVersion) {
      failingVersion = ReaderReport.NONE;
      failingReason = null;
    }
    // Queued, not written here: the other listeners are not kept waiting for the API server.
    thread.execute(this::write);
  }

  @Override
  public void onFailure(long version, Exception exception) {
    if (version <= served || version <= 0) {
      return; // not a newer version (or the manifest unreadable): nothing the protocol reports
    }
    LoadFailureReason reason = LoadFailureReason.of(exception);
    if (version == failingVersion && reason == failingReason) {
      return; // a retry failing the same way: no write per retry
    }
    failingVersion = version;
    failingReason = reason;
    thread.execute(this::write);
  }

  private void scheduleHeartbeat() {
    // 0.8 to 1.2 times the interval: readers started together (a rollout) drift apart.
    long millis = (long) (heartbeat.toMillis() * (0.8 + 0.4 * jitter.getAsDouble()));
    thread.schedule(
        () -> {
          write();
          scheduleHeartbeat();
        },
        millis,
        TimeUnit.MILLISECONDS);
  }

  /** How long after its last heartbeat the operator counts this reader as silent. */
  Duration staleAfter() {
    Duration three = heartbeat.multipliedBy(3);
    return three.compareTo(ReaderReports.MAX_STALE_AFTER) > 0
        ? ReaderReports.MAX_STALE_AFTER
        : three.compareTo(ReaderReports.MIN_STALE_AFTER) < 0
            ? ReaderReports.MIN_STALE_AFTER
            : three;
  }

  private void write() {
    if (refused) {
      return;
    }
    Lease lease =
        ReaderReports.toLease(
            new ReaderReport(
                namespace,
                pod.name(),
                pod.uid(),
                filterName,
                served,
                failingVersion,
                failingReason,
                loadedAt,
                clock.instant(),
                staleAfter()));
    var leases = client.resources(Lease.class).inNamespace(namespace);
    try {
      Lease written;
      if (resourceVersion == null) {
        written = createOrRead(lease);
      } else {
        lease.getMetadata().setResourceVersion(resourceVersion);
        try {
          written = leases.resource(lease).update();
        } catch (KubernetesClientException e) {
          if (e.getCode() != HttpURLConnection.HTTP_CONFLICT
              && e.getCode() != HttpURLConnection.HTTP_NOT_FOUND) {
            throw e;
          }
          written = createOrRead(lease); // changed or deleted by someone else: start over
        }
      }
      resourceVersion = written == null ? null : written.getMetadata().getResourceVersion();
    } catch (KubernetesClientException e) {
      resourceVersion = null;
      if (e.getCode() == HttpURLConnection.HTTP_FORBIDDEN
          || e.getCode() == HttpURLConnection.HTTP_UNAUTHORIZED) {
        refused = true;
        LOG.warn(
            "{}/{}: not reporting which version this pod serves: the API server refused to write"
                + " Lease {} ({}); the filter works as before. To report, grant the optional rule"
                + " in docs/reader-protocol.md (leases: get, create, update).",
            namespace,
            filterName,
            lease.getMetadata().getName(),
            e.getCode());
        return;
      }
      LOG.debug(
          "{}/{}: reader report not written, retrying: {}", namespace, filterName, e.toString());
    }
  }

  /** Creates the report, or if it exists (a restart of the same pod), overwrites it. */
  private Lease createOrRead(Lease lease) {
    var leases = client.resources(Lease.class).inNamespace(namespace);
    try {
      return leases.resource(lease).create();
    } catch (KubernetesClientException e) {
      if (e.getCode() != HttpURLConnection.HTTP_CONFLICT) {
        throw e;
      }
    }
    Lease existing = leases.withName(lease.getMetadata().getName()).get();
    if (existing == null) {
      return null; // deleted in between: created at the next write
    }
    lease.getMetadata().setResourceVersion(existing.getMetadata().getResourceVersion());
    return leases.resource(lease).update();
  }

  /**
   * The pod a reader runs in, from the downward API.
   *
   * @param name the pod's name ({@code metadata.name})
   * @param uid the pod's UID ({@code metadata.uid})
   */
  record PodIdentity(String name, String uid) {}
}
