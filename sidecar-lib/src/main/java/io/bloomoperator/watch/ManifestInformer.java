package io.bloomoperator.watch;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fabric8 informer on exactly one ConfigMap, the filter's manifest (a field selector on its name), kept
 * alive: fabric8 handles watch disconnects and 410 Gone itself, but an informer that stops (its
 * {@code stopped()} future completes, normally or exceptionally, without us asking) or never starts is
 * replaced by a new one after a backoff. Chunk ConfigMaps are never watched: they are large and only
 * needed once, by name.
 *
 * <p>Events go to {@link Events} as they arrive (on fabric8's thread); all bookkeeping here runs on the
 * watcher thread of {@link WatchLoop}.
 */
final class ManifestInformer {

  private static final Logger LOG = LoggerFactory.getLogger(ManifestInformer.class);

  /** Receives the manifest ConfigMap's changes. */
  interface Events {
    void manifestChanged(ConfigMap configMap);

    void manifestDeleted();
  }

  private final KubernetesClient client;
  private final String namespace;
  private final String manifestName;
  private final Events events;
  private final WatcherThread thread;
  private final Backoff restartBackoff;
  private final AtomicInteger starts = new AtomicInteger();

  // Confined to the watcher thread.
  private SharedIndexInformer<ConfigMap> informer;
  private CompletableFuture<Void> stopped;
  private boolean closed;

  ManifestInformer(KubernetesClient client, String namespace, String manifestName, Events events,
      WatcherThread thread, Backoff restartBackoff) {
    this.client = client;
    this.namespace = namespace;
    this.manifestName = manifestName;
    this.events = events;
    this.thread = thread;
    this.restartBackoff = restartBackoff;
  }

  /** Starts the first informer (asynchronously: an unreachable API server must not block the caller). */
  void start() {
    thread.execute(this::startInformer);
  }

  /** Stops watching for good. Call on the watcher thread. */
  void close() {
    closed = true;
    stopQuietly(informer);
    informer = null;
  }

  /** How many informers were started: 1 plus the number of restarts. */
  int starts() {
    return starts.get();
  }

  /**
   * Test hook: makes the running informer's {@code stopped()} future complete exceptionally, as fabric8
   * does when an informer gives up on a non-410 error. Returns once the watcher has reacted to it (stopped
   * the informer and scheduled a restart).
   */
  void failForTest(Throwable cause) {
    thread.callAndWait(() -> {
      if (stopped != null) {
        stopped.completeExceptionally(cause);
      }
      return null;
    });
    thread.callAndWait(() -> null); // the reaction was queued behind the task above
  }

  private void startInformer() {
    if (closed) {
      return;
    }
    SharedIndexInformer<ConfigMap> created;
    try {
      created = client.configMaps().inNamespace(namespace).withName(manifestName).runnableInformer(0);
    } catch (RuntimeException e) {
      scheduleRestart(null, e);
      return;
    }
    created.addEventHandler(new Handler());
    informer = created;
    starts.incrementAndGet();
    // Captured once: completing this very future is what the test hook does.
    CompletableFuture<Void> stoppedFuture = created.stopped().toCompletableFuture();
    stopped = stoppedFuture;
    stoppedFuture.whenComplete((ignored, error) -> thread.execute(() -> onStopped(created, error)));
    try {
      created.start().whenComplete((ignored, error) -> thread.execute(() -> {
        if (error == null) {
          if (created == informer) {
            restartBackoff.reset();
            LOG.debug("watching manifest {}/{}", namespace, manifestName);
          }
        } else {
          onStopped(created, error);
        }
      }));
    } catch (RuntimeException e) {
      onStopped(created, e);
    }
  }

  private void onStopped(SharedIndexInformer<ConfigMap> which, Throwable error) {
    if (closed || which != informer) {
      return; // our own stop, or an informer already replaced
    }
    informer = null;
    stopped = null;
    stopQuietly(which);
    scheduleRestart(which, error);
  }

  private void scheduleRestart(SharedIndexInformer<ConfigMap> which, Throwable error) {
    long delayMillis = restartBackoff.next().toMillis();
    LOG.warn("watch on manifest {}/{} stopped ({}); restarting in {} ms", namespace, manifestName,
        error == null ? "no error" : error.toString(), delayMillis);
    thread.schedule(this::startInformer, delayMillis, TimeUnit.MILLISECONDS);
  }

  private static void stopQuietly(SharedIndexInformer<ConfigMap> which) {
    if (which == null) {
      return;
    }
    try {
      which.stop();
    } catch (RuntimeException e) {
      LOG.debug("stopping informer failed", e);
    }
  }

  /** Forwards manifest events; ignores anything else (the field selector should not let it through). */
  private final class Handler implements ResourceEventHandler<ConfigMap> {
    @Override
    public void onAdd(ConfigMap configMap) {
      if (isManifest(configMap)) {
        events.manifestChanged(configMap);
      }
    }

    @Override
    public void onUpdate(ConfigMap oldConfigMap, ConfigMap newConfigMap) {
      if (isManifest(newConfigMap)) {
        events.manifestChanged(newConfigMap);
      }
    }

    @Override
    public void onDelete(ConfigMap configMap, boolean finalStateUnknown) {
      if (isManifest(configMap)) {
        events.manifestDeleted();
      }
    }

    private boolean isManifest(ConfigMap configMap) {
      return configMap != null && configMap.getMetadata() != null
          && manifestName.equals(configMap.getMetadata().getName());
    }
  }
}
