package io.bloomoperator.readers;

import io.bloomoperator.snapshot.ReaderReport;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether a report's pod is a live Pod of the report's namespace with the report's owner UID: the
 * rule that keeps a Lease anyone could write from counting unless a real pod stands behind it.
 *
 * <p>Only {@link #checkRound} asks the API server (one GET per pod), on the counting thread; {@link
 * #isLive} only reads its verdicts, so the canary judgements of reconcile threads spend no GET and
 * see a new reader from the first round after its report. A round makes at most {@code
 * maxChecksPerRound} GETs operator-wide, shared in turns ({@link FairTurns}) by the namespaces with
 * pods to check: each gets an equal share, what one leaves unused goes to the others. A namespace
 * full of forged reports therefore spends only its own share, and the pod of a live reader in any
 * other namespace is checked in the next round (in its first turn), or, while more namespaces than
 * {@code maxChecksPerRound} have pods to check, within ceil(namespaces / maxChecksPerRound) rounds:
 * the turns start where the last round's ran out.
 *
 * <p>A live pod is trusted for {@code checkInterval}, then asked again (counted as live until it
 * is). A pod found absent, with another UID, being deleted or terminated never comes back under
 * that name and UID (the API server assigns UIDs at creation; those states are final), so that
 * verdict is kept as long as a report names the pod: a forged report costs one GET, not one per
 * interval. Verdicts are kept per namespace, only for the pods the namespace's reports name at the
 * last round: bounded by the report store's per-namespace bound, and one namespace's reports never
 * evict another's verdicts.
 */
final class LivePods {

  private static final Logger LOG = LoggerFactory.getLogger(LivePods.class);

  /** Reads a pod: null when absent; a {@link KubernetesClientException} when it cannot tell. */
  @FunctionalInterface
  interface PodLookup {
    Pod get(String namespace, String name);
  }

  private final PodLookup lookup;
  private final Clock clock;
  private final Duration checkInterval;
  private final int maxChecksPerRound;
  private final Duration maxCheckTime;
  private final Map<String, Map<String, Verdict>> byNamespace = new ConcurrentHashMap<>();
  private String firstTurn; // counting thread only
  private boolean warnedForbidden; // counting thread only

  /**
   * @param checkInterval how long a live pod is trusted
   * @param maxChecksPerRound the GETs of one round, all namespaces together
   * @param maxCheckTime how long one round may spend on GETs (the GETs are serial: a slow API
   *     server must not hold every namespace's count back); the turns left go first next round
   */
  LivePods(
      PodLookup lookup,
      Clock clock,
      Duration checkInterval,
      int maxChecksPerRound,
      Duration maxCheckTime) {
    this.lookup = lookup;
    this.clock = clock;
    this.checkInterval = checkInterval;
    this.maxChecksPerRound = maxChecksPerRound;
    this.maxCheckTime = maxCheckTime;
  }

  /** Pods read with {@code client}. */
  static LivePods of(
      KubernetesClient client,
      Clock clock,
      Duration checkInterval,
      int maxChecksPerRound,
      Duration maxCheckTime) {
    return new LivePods(
        (namespace, name) -> client.pods().inNamespace(namespace).withName(name).get(),
        clock,
        checkInterval,
        maxChecksPerRound,
        maxCheckTime);
  }

  /**
   * Whether {@code report} comes from a live pod; false too when not checked yet. Never asks the
   * API server; safe on any thread.
   */
  boolean isLive(ReaderReport report) {
    Map<String, Verdict> verdicts = byNamespace.get(report.namespace());
    Verdict verdict = verdicts == null ? null : verdicts.get(key(report));
    return verdict != null && verdict.live();
  }

  /**
   * Checks the pods of {@code reports} (by namespace) that are due: never checked, or live and
   * checked longer than {@code checkInterval} ago; forgets the pods and namespaces no report names
   * any more. At most {@code maxChecksPerRound} GETs and {@code maxCheckTime}, in fair turns across
   * namespaces, the oldest verdicts of a namespace first. Called by one thread at a time (the
   * counting round).
   *
   * @return the GETs made
   */
  int checkRound(Map<String, ? extends Collection<ReaderReport>> reports) {
    Instant now = clock.instant();
    byNamespace.keySet().retainAll(reports.keySet());
    List<String> order = turnOrder(reports.keySet());
    List<List<ReaderReport>> queues = new ArrayList<>(order.size());
    for (String namespace : order) {
      Map<String, ReaderReport> named = new LinkedHashMap<>();
      reports.get(namespace).forEach(r -> named.putIfAbsent(key(r), r));
      Map<String, Verdict> verdicts =
          byNamespace.computeIfAbsent(namespace, n -> new ConcurrentHashMap<>());
      verdicts.keySet().retainAll(named.keySet());
      List<ReaderReport> due = new ArrayList<>();
      for (Map.Entry<String, ReaderReport> pod : named.entrySet()) {
        Verdict verdict = verdicts.get(pod.getKey());
        if (verdict == null
            || (verdict.live() && !verdict.checkedAt().plus(checkInterval).isAfter(now))) {
          due.add(pod.getValue());
        }
      }
      due.sort(Comparator.comparing(r -> checkedAt(verdicts, r)));
      queues.add(due);
    }
    List<ReaderReport> turns = FairTurns.take(queues, maxChecksPerRound);
    Instant until = now.plus(maxCheckTime);
    int made = 0;
    for (ReaderReport report : turns) {
      if (made > 0 && !clock.instant().isBefore(until)) {
        break; // out of time: the namespaces that got no turn are still due, and first next round
      }
      check(report);
      made++;
    }
    firstTurn = nextFirstTurn(order, queues, made);
    return made;
  }

  /** The namespaces in sorted order, starting at {@link #firstTurn} (or the next after it). */
  private List<String> turnOrder(Collection<String> namespaces) {
    TreeSet<String> sorted = new TreeSet<>(namespaces);
    List<String> order = new ArrayList<>(sorted.size());
    if (firstTurn != null) {
      order.addAll(sorted.tailSet(firstTurn, true));
      order.addAll(sorted.headSet(firstTurn, false));
    } else {
      order.addAll(sorted);
    }
    return order;
  }

  /**
   * Where the next round starts: at the first namespace with due pods that got no turn (more such
   * namespaces than GETs: each waits at most ceil(namespaces / GETs) rounds), else one further on,
   * so that the turns beyond an equal share go round too.
   */
  private static String nextFirstTurn(
      List<String> order, List<List<ReaderReport>> queues, int taken) {
    int served = 0;
    for (int i = 0; i < order.size(); i++) {
      if (!queues.get(i).isEmpty() && served++ == taken) {
        return order.get(i);
      }
    }
    return order.size() > 1 ? order.get(1) : null;
  }

  private void check(ReaderReport report) {
    Pod pod;
    try {
      pod = lookup.get(report.namespace(), report.podName());
    } catch (KubernetesClientException e) {
      // Unknown, not dead: the verdict stays as it was and the pod is due again next round.
      if (e.getCode() == 403 && !warnedForbidden) {
        warnedForbidden = true;
        LOG.warn("cannot read pods to check reader reports (RBAC: pods get); none is counted");
      }
      return;
    }
    boolean live =
        pod != null
            && report.podUid().equals(pod.getMetadata().getUid())
            && pod.getMetadata().getDeletionTimestamp() == null
            && !(pod.getStatus() != null
                && ("Succeeded".equals(pod.getStatus().getPhase())
                    || "Failed".equals(pod.getStatus().getPhase())));
    Map<String, Verdict> verdicts = byNamespace.get(report.namespace());
    if (verdicts != null) {
      verdicts.put(key(report), new Verdict(live, clock.instant()));
    }
  }

  private static Instant checkedAt(Map<String, Verdict> verdicts, ReaderReport report) {
    Verdict verdict = verdicts.get(key(report));
    return verdict == null ? Instant.MIN : verdict.checkedAt();
  }

  private static String key(ReaderReport report) {
    return report.podName() + "/" + report.podUid();
  }

  /** What a GET found; a dead verdict is final. */
  private record Verdict(boolean live, Instant checkedAt) {}
}
