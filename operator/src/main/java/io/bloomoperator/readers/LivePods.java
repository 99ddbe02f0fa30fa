package io.bloomoperator.readers;

import io.bloomoperator.snapshot.ReaderReport;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether a report's pod is a live Pod of the report's namespace with the report's owner UID: the
 * rule that keeps a Lease anyone could write from counting unless a real pod stands behind it. One
 * GET per pod, then trusted for {@code checkInterval} (a deleted pod's report goes with it through
 * the garbage collector; this catches a report that outlives it or never had one). At most {@code
 * maxChecksPerRound} GETs per counting round: a namespace full of forged reports slows its own
 * count, not the API server.
 */
final class LivePods {

  private static final Logger LOG = LoggerFactory.getLogger(LivePods.class);
  private static final int MAX_ENTRIES = 200_000;

  private final KubernetesClient client;
  private final Clock clock;
  private final Duration checkInterval;
  private final int maxChecksPerRound;
  private final Map<String, Entry> byUid = new ConcurrentHashMap<>();
  private int checksThisRound;
  private boolean warnedForbidden;

  LivePods(KubernetesClient client, Clock clock, Duration checkInterval, int maxChecksPerRound) {
    this.client = client;
    this.clock = clock;
    this.checkInterval = checkInterval;
    this.maxChecksPerRound = maxChecksPerRound;
  }

  /** Starts a counting round (resets the GET budget). */
  void newRound() {
    checksThisRound = 0;
    if (byUid.size() > MAX_ENTRIES) {
      byUid.clear();
    }
  }

  /** Whether {@code report} comes from a live pod; false too when not known yet. */
  boolean isLive(ReaderReport report) {
    String key = report.namespace() + "/" + report.podName() + "/" + report.podUid();
    Instant now = clock.instant();
    Entry entry = byUid.get(key);
    if (entry != null && entry.checkedAt.plus(checkInterval).isAfter(now)) {
      return entry.live;
    }
    if (checksThisRound >= maxChecksPerRound) {
      return entry != null && entry.live;
    }
    checksThisRound++;
    boolean live;
    try {
      Pod pod = client.pods().inNamespace(report.namespace()).withName(report.podName()).get();
      live =
          pod != null
              && report.podUid().equals(pod.getMetadata().getUid())
              && pod.getMetadata().getDeletionTimestamp() == null
              && !(pod.getStatus() != null
                  && ("Succeeded".equals(pod.getStatus().getPhase())
                      || "Failed".equals(pod.getStatus().getPhase())));
    } catch (KubernetesClientException e) {
      if (e.getCode() == 403 && !warnedForbidden) {
        warnedForbidden = true;
        LOG.warn("cannot read pods to check reader reports (RBAC: pods get); none is counted");
      }
      return entry != null && entry.live;
    }
    byUid.put(key, new Entry(live, now));
    return live;
  }

  private record Entry(boolean live, Instant checkedAt) {}
}
