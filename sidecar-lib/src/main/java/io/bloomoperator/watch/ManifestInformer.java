package io.bloomoperator.watch;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fabric8 informer on exactly one ConfigMap, the filter's manifest (a field selector on its
 * name), kept alive: fabric8 handles watch disconnects and 410 Gone itself, but an informer that
 * stops (its {@code stopped()} future completes, normally or exceptionally, without us asking) or
 * never starts is replaced by a new one after a backoff. Chunk ConfigMaps are never watched: they
 * are large and only needed once, by name.
 *
 * <p>Events are handed to the watcher thread as they arrive, where the callbacks run; all
 * bookkeeping here runs on that thread too.
 */
final class ManifestInformer implements ManifestFeed {

  private static final Logger LOG = LoggerFactory.getLogger(ManifestInformer.class);

  private final KubernetesClient client;
  private final String namespace;
  private final String manifestName;
  private final WatcherThread thread;
  private final Backoff restartBackoff;
  private final Consumer<SharedIndexInformer<ConfigMap>> onCreated;

  // Confined to the watcher thread (set once by start, before the first informer).
  private Consumer<ConfigMap> onChanged;
  private Runnable onDeleted;
  private SharedIndexInformer<ConfigMap> informer;
  private boolean closed;

  /**
   * @param onCreated told of every informer created (the first and each replacement) before it
   *     starts: lets a test count restarts or stop one as fabric8 would
   */
  ManifestInformer(
      KubernetesClient client,
      String namespace,
      String manifestName,
      WatcherThread thread,
      Backoff restartBackoff,
      Consumer<SharedIndexInformer<ConfigMap>> onCreated) {
    this.client = client;
    this.namespace = namespace;
    this.manifestName = manifestName;
    this.thread = thread;
    this.restartBackoff = restartBackoff;
    this.onCreated = onCreated;
  }

  /** Starts the first informer on the watcher thread. */
  @Override
  public void start(Consumer<ConfigMap> onChanged, Runnable onDeleted) {
    thread.execute(
        () -> {
          this.onChanged = onChanged;
          this.onDeleted = onDeleted;
          startInformer();
        });
  }

  @Override
  public ConfigMap read() {
    return client.configMaps().inNamespace(namespace).withName(manifestName).get();
  }

  @Override
  public void close() {
    closed = true;
    stopQuietly(informer);
    informer = null;
  }

  private void startInformer() {
    if (closed) {
      return;
    }
    SharedIndexInformer<ConfigMap> created;
    try {
      created =
          client.configMaps().inNamespace(namespace).withName(manifestName).runnableInformer(0);
    } catch (RuntimeException e) {
      scheduleRestart(null, e);
      return;
    }
    created.addEventHandler(new Handler());
    informer = created;
    onCreated.accept(created);
    created
        .stopped()
        .whenComplete((ignored, error) -> thread.execute(() -> onStopped(created, error)));
    try {
      created
          .start()
          .whenComplete(
              (ignored, error) ->
                  thread.execute(
                      () -> {
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
    stopQuietly(which);
    scheduleRestart(which, error);
  }

  private void scheduleRestart(SharedIndexInformer<ConfigMap> which, Throwable error) {
    long delayMillis = restartBackoff.next().toMillis();
    LOG.warn(
        "watch on manifest {}/{} stopped ({}); restarting in {} ms",
        namespace,
        manifestName,
        error == null ? "no error" : error.toString(),
        delayMillis);
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

  /**
   * Hands manifest events to the watcher thread; ignores anything else (the field selector should
   * not let it through).
   */
  private final class Handler implements ResourceEventHandler<ConfigMap> {
    @Override
    public void onAdd(ConfigMap configMap) {
      if (isManifest(configMap)) {
        thread.execute(() -> onChanged.accept(configMap));
      }
    }

    @Override
    public void onUpdate(ConfigMap oldConfigMap, ConfigMap newConfigMap) {
      if (isManifest(newConfigMap)) {
        thread.execute(() -> onChanged.accept(newConfigMap));
      }
    }

    @Override
    public void onDelete(ConfigMap configMap, boolean finalStateUnknown) {
      if (isManifest(configMap)) {
        thread.execute(() -> onDeleted.run());
      }
    }

    private boolean isManifest(ConfigMap configMap) {
      return configMap != null
          && configMap.getMetadata() != null
          && manifestName.equals(configMap.getMetadata().getName());
    }
  }
}
