package io.bloomoperator.readers;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.ReaderStatus;
import io.bloomoperator.publish.StatusBudget;
import io.bloomoperator.publish.WriteFence;
import io.bloomoperator.snapshot.ReaderReport;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.javaoperatorsdk.operator.api.config.informer.InformerConfiguration;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;
import io.javaoperatorsdk.operator.processing.event.source.Cache;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts the reader reports (docs/reader-protocol.md) of every BloomFilter into its {@code
 * status.readers}, and tells of rollouts that complete or stall (events, metrics).
 *
 * <p>Decoupled from the reports' rate on purpose: a report only updates an in-memory store; every
 * {@link ReaderSettings#statusInterval()} one round counts each filter and patches its status only
 * if a count changed. A thousand heartbeats therefore cause no build (a status patch does not
 * reconcile, see RebuildRequest) and at most one status write per filter and round, none when
 * nothing changed. Each write stores the whole object, whose size the tenant decides: it is charged
 * to the namespace's and the filter's etcd write budget ({@link StatusBudget#deferrable}, which
 * also spaces one filter's writes by its size); a write the budget has no room for is skipped and
 * the counts, kept in memory, are written by a later round. Canaries are judged from the reports in
 * memory, never from the status, so a deferred write never holds a canary back.
 *
 * <p>Registered as an event source of the BloomFilter controller for its lifecycle and its cache of
 * filters; it never triggers a reconcile. Runs on every replica (so a new leader starts with warm
 * reports) and writes only after the write fence says this replica leads.
 */
public final class ReaderRollouts extends AbstractEventSource<Void, BloomFilter> {

  /** Event reason: every reader with a recent heartbeat serves the published version. */
  public static final String EVENT_ROLLOUT_COMPLETE = "RolloutComplete";

  /** Event reason: readers fail to load the published version, or the rollout takes too long. */
  public static final String EVENT_ROLLOUT_STALLED = "RolloutStalled";

  private static final Logger LOG = LoggerFactory.getLogger(ReaderRollouts.class);

  /** Field names of {@link ReaderStatus}, sent as null when unset (a merge patch keeps omitted). */
  private static final List<String> FIELDS =
      List.of(
          "version",
          "total",
          "current",
          "stale",
          "failing",
          "serving",
          "otherVersions",
          "failingReasons",
          "rolloutStartedAt",
          "rolloutCompletedAt",
          "rolloutStalled");

  private static final ObjectMapper JSON = new ObjectMapper();

  private final KubernetesClient client;
  private final Set<String> namespaces;
  private final Cache<BloomFilter> filters;
  private final ReaderSettings settings;
  private final WriteFence fence;
  private final StatusBudget budget;
  private final Clock clock;
  private final RolloutSink sink;
  private final ReportStore store;
  private final LivePods pods;
  private final Map<ResourceID, ReaderStatus> written = new ConcurrentHashMap<>();
  private final List<ReportWatch> watches = new ArrayList<>();
  private ScheduledExecutorService executor;

  /**
   * @param namespaces the namespaces the controller watches, as java-operator-sdk resolves them
   * @param filters the controller's cache of BloomFilters
   * @param budget charged with every status write
   * @param sink where events and metrics of rollouts go
   */
  public ReaderRollouts(
      KubernetesClient client,
      Set<String> namespaces,
      Cache<BloomFilter> filters,
      ReaderSettings settings,
      WriteFence fence,
      StatusBudget budget,
      Clock clock,
      RolloutSink sink) {
    super(Void.class, "reader-reports");
    this.client = client;
    this.namespaces = namespaces;
    this.filters = filters;
    this.settings = settings;
    this.fence = fence;
    this.budget = budget;
    this.clock = clock;
    this.sink = sink;
    this.store = new ReportStore(settings.maxReportsPerNamespace());
    // The per-namespace report bound doubles as the operator-wide ceiling of pod GETs per round,
    // shared fairly between namespaces (LivePods); the checks take at most one interval.
    this.pods =
        LivePods.of(
            client,
            clock,
            settings.podCheckInterval(),
            settings.maxReportsPerNamespace(),
            settings.statusInterval());
  }

  @Override
  public synchronized void start() {
    if (isRunning()) {
      return;
    }
    executor =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "reader-reports");
              t.setDaemon(true);
              return t;
            });
    super.start();
    if (InformerConfiguration.allNamespacesWatched(namespaces)) {
      watches.add(
          new ReportWatch(client, null, store, settings.maxReportsPerNamespace(), executor));
    } else {
      namespaces.forEach(
          ns ->
              watches.add(
                  new ReportWatch(client, ns, store, settings.maxReportsPerNamespace(), executor)));
    }
    watches.forEach(ReportWatch::start);
    long millis = settings.statusInterval().toMillis();
    executor.scheduleWithFixedDelay(this::round, millis, millis, TimeUnit.MILLISECONDS);
  }

  @Override
  public synchronized void stop() {
    if (!isRunning()) {
      return;
    }
    super.stop();
    watches.forEach(ReportWatch::stop);
    watches.clear();
    executor.shutdownNow();
  }

  @Override
  public Set<Void> getSecondaryResources(BloomFilter primary) {
    return Set.of();
  }

  /**
   * The share's readers of {@code filter}'s canary {@code canaryVersion}, from the reports of live
   * pods of its namespace ({@link CanaryJudgement#count}).
   */
  public CanaryJudgement.Counts canaryCounts(
      BloomFilter filter, long canaryVersion, int percent, Instant now) {
    return CanaryJudgement.count(liveReports(filter), canaryVersion, percent, now);
  }

  /**
   * The verdict on {@code filter}'s canary ({@link CanaryJudgement#judge}) from the reports of live
   * pods of its namespace. A replica that has not yet seen reports (just started) sees no reader of
   * the share: it waits, it never promotes on no evidence. Asks the API server nothing: a reader
   * counts from the first counting round that checked its pod (LivePods).
   */
  public CanaryJudgement.Decision judgeCanary(
      BloomFilter filter,
      long canaryVersion,
      int percent,
      Instant startedAt,
      Duration holdFor,
      Instant now) {
    return CanaryJudgement.judge(
        liveReports(filter), canaryVersion, percent, startedAt, holdFor, now);
  }

  /**
   * Whether a reader of a live pod of {@code filter}'s namespace reports serving {@code version}.
   */
  public boolean anyServing(BloomFilter filter, long version) {
    return liveReports(filter).stream().anyMatch(r -> r.servedVersion() == version);
  }

  private List<ReaderReport> liveReports(BloomFilter filter) {
    return store.about(filter.getMetadata().getNamespace(), filter.getMetadata().getName()).stream()
        .filter(pods::isLive)
        .toList();
  }

  private static Map<String, Set<String>> filterNames(List<BloomFilter> filters) {
    return filters.stream()
        .collect(
            Collectors.groupingBy(
                f -> f.getMetadata().getNamespace(),
                Collectors.mapping(f -> f.getMetadata().getName(), Collectors.toSet())));
  }

  /** One counting round over every known filter. */
  private void round() {
    try {
      List<BloomFilter> known = filters.list().toList();
      // Every pod check of the round first, in fair turns across namespaces, so that counting and
      // canary judgements only read verdicts and the filters' order cannot starve a namespace.
      pods.checkRound(store.about(filterNames(known)));
      Instant now = clock.instant();
      written
          .keySet()
          .retainAll(known.stream().map(ResourceID::fromResource).collect(Collectors.toSet()));
      for (BloomFilter filter : known) {
        count(filter, now);
      }
    } catch (WriteFence.NotLeaderException e) {
      LOG.debug("not the leader: reader counts not written");
    } catch (RuntimeException e) {
      // Never let it escape: the executor would cancel every later round.
      LOG.warn("counting reader reports failed: {}", e.toString());
    }
  }

  private void count(BloomFilter filter, Instant now) {
    var status = filter.getStatus();
    if (status == null || status.getVersion() == null) {
      return; // nothing published: nothing to compare with
    }
    ResourceID id = ResourceID.fromResource(filter);
    String namespace = filter.getMetadata().getNamespace();
    List<ReaderReport> live =
        store.about(namespace, filter.getMetadata().getName()).stream()
            .filter(pods::isLive)
            .toList();
    ReaderStatus previous = written.getOrDefault(id, status.getReaders());
    if (previous == null && live.isEmpty()) {
      return;
    }
    ReaderStatus next = ReaderTally.count(live, status.getVersion(), now);
    Rollout.Outcome outcome =
        Rollout.advance(
            previous, next, parse(status.getLastBuildTime()), now, stallAfter(status.getCanary()));
    if (next.equals(previous)) {
      return;
    }
    fence.check();
    if (!budget.deferrable(filter, now)) {
      return; // not written: the next rounds compare with what was, and write when it fits
    }
    try {
      client
          .resources(BloomFilter.class)
          .inNamespace(namespace)
          .withName(filter.getMetadata().getName())
          .subresource("status")
          .patch(PatchContext.of(PatchType.JSON_MERGE), patch(next));
    } catch (KubernetesClientException e) {
      LOG.debug(
          "reader counts of {}/{} not written: {}",
          namespace,
          filter.getMetadata().getName(),
          e.getMessage());
      return;
    }
    written.put(id, next);
    sink.counted(filter, next);
    switch (outcome.step()) {
      case COMPLETED -> sink.completed(filter, next, outcome.took());
      case STALLED -> sink.stalled(filter, next);
      default -> {}
    }
  }

  /**
   * {@code {"status":{"readers":{...}}}} with every field named, null when unset: a merge patch
   * leaves omitted fields as they were, and a finished rollout must not keep its old completion.
   */
  static String patch(ReaderStatus readers) {
    @SuppressWarnings("unchecked")
    Map<String, Object> fields = new LinkedHashMap<>(JSON.convertValue(readers, Map.class));
    FIELDS.forEach(f -> fields.putIfAbsent(f, null));
    try {
      return JSON.writeValueAsString(Map.of("status", Map.of("readers", fields)));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * How long a rollout may take before it stalls: while a canary runs, its share serves the canary
   * rather than the published version for up to its hold time, which is no stall.
   */
  private Duration stallAfter(io.bloomoperator.api.CanaryStatus canary) {
    if (canary == null || !io.bloomoperator.api.CanaryStatus.RUNNING.equals(canary.getState())) {
      return settings.stallAfter();
    }
    try {
      return settings.stallAfter().plus(io.bloomoperator.api.Durations.parse(canary.getHoldFor()));
    } catch (IllegalArgumentException e) {
      return settings.stallAfter();
    }
  }

  private static Instant parse(String time) {
    try {
      return time == null ? null : Instant.parse(time);
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** Where the outcome of a count goes besides the status: events and metrics. */
  public interface RolloutSink {

    /** The counts just written. */
    void counted(BloomFilter filter, ReaderStatus readers);

    /** Every reader with a recent heartbeat serves the published version, {@code took} after it. */
    void completed(BloomFilter filter, ReaderStatus readers, Duration took);

    /** The rollout stalled. */
    void stalled(BloomFilter filter, ReaderStatus readers);
  }
}
