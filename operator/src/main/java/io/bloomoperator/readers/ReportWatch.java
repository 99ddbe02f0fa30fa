package io.bloomoperator.readers;

import io.bloomoperator.snapshot.ReaderReport;
import io.bloomoperator.snapshot.ReaderReports;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.FilterWatchListDeletable;
import io.fabric8.kubernetes.client.dsl.Resource;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a {@link ReportStore} current with the reader-report Leases of one scope (a namespace, or
 * all): lists them page by page, then watches from the list's resourceVersion; a watch that closes
 * (410 Gone after a compaction, an API server restart) is replaced by a new list and watch. Not an
 * informer: an informer would hold every Lease carrying the label, whole (see ManifestEvents for
 * what that did with look-alike ConfigMaps). Each Lease is parsed as it arrives and only the parsed
 * report kept.
 */
final class ReportWatch {

  private static final Logger LOG = LoggerFactory.getLogger(ReportWatch.class);
  private static final long PAGE = 500;
  private static final Duration FIRST_RETRY = Duration.ofSeconds(1);
  private static final Duration MAX_RETRY = Duration.ofSeconds(30);

  private final KubernetesClient client;
  private final String namespace; // null: all namespaces
  private final ReportStore store;
  private final int maxPerNamespace;
  private final ScheduledExecutorService executor;
  private volatile Watch watch;
  private volatile boolean running;
  private boolean warnedFull;
  private boolean failing; // said once at WARN; repeats go to DEBUG until a list succeeds

  ReportWatch(
      KubernetesClient client,
      String namespace,
      ReportStore store,
      int maxPerNamespace,
      ScheduledExecutorService executor) {
    this.client = client;
    this.namespace = namespace;
    this.store = store;
    this.maxPerNamespace = maxPerNamespace;
    this.executor = executor;
  }

  /** Lists and starts watching; a failure (no RBAC) is retried in the background. */
  void start() {
    running = true;
    executor.execute(() -> open(FIRST_RETRY));
  }

  void stop() {
    running = false;
    Watch current = watch;
    if (current != null) {
      current.close();
    }
  }

  private FilterWatchListDeletable<Lease, LeaseList, Resource<Lease>> leases() {
    var all = client.resources(Lease.class, LeaseList.class);
    return (namespace == null ? all.inAnyNamespace() : all.inNamespace(namespace))
        .withLabelSelector(ReaderReports.SELECTOR);
  }

  private void open(Duration retry) {
    if (!running) {
      return;
    }
    try {
      String resourceVersion = relist();
      Watch opened =
          leases()
              .watch(
                  new ListOptionsBuilder()
                      .withResourceVersion(resourceVersion)
                      .withAllowWatchBookmarks(true)
                      .build(),
                  new Events());
      watch = opened;
      if (failing) {
        failing = false;
        LOG.info("reading reader reports ({}) again", scope());
      }
      if (!running) {
        opened.close();
      }
    } catch (RuntimeException e) {
      Duration next =
          retry.multipliedBy(2).compareTo(MAX_RETRY) > 0 ? MAX_RETRY : retry.multipliedBy(2);
      if (failing) {
        LOG.debug("reader reports ({}) still unreadable: {}", scope(), e.getMessage());
      } else {
        failing = true;
        LOG.warn(
            "could not read reader reports ({}); status.readers is not updated until it can,"
                + " retrying with backoff up to {}: {}",
            scope(),
            MAX_RETRY,
            e.getMessage());
      }
      executor.schedule(() -> open(next), retry.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  /** Replaces what the store holds of this scope with a fresh list; returns its resourceVersion. */
  private String relist() {
    ReportStore listed = new ReportStore(maxPerNamespace);
    String continueToken = null;
    String resourceVersion;
    do {
      LeaseList page =
          leases()
              .list(new ListOptionsBuilder().withLimit(PAGE).withContinue(continueToken).build());
      page.getItems().forEach(lease -> add(listed, lease));
      resourceVersion = page.getMetadata().getResourceVersion();
      continueToken = page.getMetadata().getContinue();
    } while (continueToken != null && !continueToken.isEmpty() && running);
    store.replace(namespace, listed);
    return resourceVersion;
  }

  private void add(ReportStore into, Lease lease) {
    String ns = lease.getMetadata().getNamespace();
    String name = lease.getMetadata().getName();
    Optional<ReaderReport> report = ReaderReports.parse(lease);
    if (report.isEmpty()) {
      into.remove(ns, name); // changed into something that is not a report
      return;
    }
    if (!into.put(ns, name, report.get()) && !warnedFull) {
      warnedFull = true;
      LOG.warn(
          "namespace {} holds more reader reports than BLOOM_MAX_READER_REPORTS_PER_NAMESPACE;"
              + " the others are ignored",
          ns);
    }
  }

  private String scope() {
    return namespace == null ? "all namespaces" : "namespace " + namespace;
  }

  private final class Events implements Watcher<Lease> {
    @Override
    public void eventReceived(Action action, Lease lease) {
      if (!running) {
        return;
      }
      switch (action) {
        case ADDED, MODIFIED -> add(store, lease);
        case DELETED ->
            store.remove(lease.getMetadata().getNamespace(), lease.getMetadata().getName());
        default -> {}
      }
    }

    @Override
    public void onClose(WatcherException cause) {
      if (running) {
        LOG.info("reader report watch ({}) closed, listing again: {}", scope(), cause.getMessage());
        executor.schedule(() -> open(FIRST_RETRY), FIRST_RETRY.toMillis(), TimeUnit.MILLISECONDS);
      }
    }

    @Override
    public void onClose() {}
  }
}
