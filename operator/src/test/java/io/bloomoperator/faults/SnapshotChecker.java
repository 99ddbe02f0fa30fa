package io.bloomoperator.faults;

import io.bloomoperator.snapshot.AnnouncedManifest;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Verifies the snapshot protocol's promise the way a reader relies on it, at every read: the
 * manifest names chunks that exist, each with the size and sha256 the manifest states, and the
 * concatenation has the manifest's total sha256 (decoded by sidecar-lib's {@link SnapshotDecoder},
 * the reader's own code). Reads come from a polling loop (GET of every watched manifest, one after
 * the other) and from a watch on the manifests (the object each event carries).
 *
 * <p>A chunk may legitimately be gone when the manifest read has since been superseded and the
 * previous version's grace period ended (a slow reader). Such a read is a violation only if the
 * manifest still names the version afterwards, or, for polled reads, if the chunk was gone sooner
 * than {@code retainPrevious} after the manifest was read as the current one: chunks must outlive
 * their supersession by that long. Anything else that fails (digest, size, a manifest that does not
 * parse, a version going backwards) is a violation.
 */
final class SnapshotChecker implements AutoCloseable {

  /** Slack for the operator's and the checker's view of "superseded at" (same clock, two reads). */
  private static final Duration CLOCK_SLACK = Duration.ofMillis(500);

  private final KubernetesClient client;
  private final String namespace;
  private final List<String> filters;
  private final Duration retainPrevious;
  private final AtomicLong checks = new AtomicLong();
  private final AtomicLong polledChecks = new AtomicLong();
  private final AtomicLong watchedChecks = new AtomicLong();
  private final AtomicLong staleReads = new AtomicLong();
  private final AtomicLong apiErrors = new AtomicLong();
  private final List<String> violations = new CopyOnWriteArrayList<>();
  private final Map<String, Long> highestPolledVersion = new ConcurrentHashMap<>();
  private final AtomicBoolean running = new AtomicBoolean();
  private final ExecutorService watchedReads =
      Executors.newSingleThreadExecutor(r -> daemon(r, "checker-watched"));
  private Thread poller;
  private Watch watch;

  SnapshotChecker(
      KubernetesClient client, String namespace, List<String> filters, Duration retainPrevious) {
    this.client = client;
    this.namespace = namespace;
    this.filters = List.copyOf(filters);
    this.retainPrevious = retainPrevious;
  }

  /** Starts polling and watching. */
  void start() {
    running.set(true);
    watch =
        client
            .configMaps()
            .inNamespace(namespace)
            .withLabel(SnapshotNames.LABEL_ROLE, SnapshotNames.ROLE_MANIFEST)
            .watch(
                new Watcher<>() {
                  @Override
                  public void eventReceived(Action action, ConfigMap manifest) {
                    if (action == Action.ADDED || action == Action.MODIFIED) {
                      long seen = System.nanoTime();
                      watchedReads.execute(() -> check(manifest, seen, false));
                    }
                  }

                  @Override
                  public void onClose(WatcherException cause) {
                    if (running.get()) {
                      violations.add("manifest watch closed: " + cause.getMessage());
                    }
                  }
                });
    poller = daemon(this::poll, "checker-poll");
    poller.start();
  }

  private void poll() {
    while (running.get()) {
      for (String filter : filters) {
        try {
          ConfigMap manifest =
              client
                  .configMaps()
                  .inNamespace(namespace)
                  .withName(SnapshotNames.manifestName(filter))
                  .get();
          if (manifest != null) {
            check(manifest, System.nanoTime(), true);
          }
        } catch (KubernetesClientException e) {
          apiErrors.incrementAndGet();
        }
      }
    }
  }

  /**
   * One read as a reader does it.
   *
   * @param readAt when the manifest was read (nanoTime)
   * @param polled whether {@code manifest} was the current one at {@code readAt} (a GET), rather
   *     than a watch event that may have queued behind others
   */
  void check(ConfigMap manifestMap, long readAt, boolean polled) {
    String name = manifestMap.getMetadata().getName();
    AnnouncedManifest stored;
    try {
      stored = SnapshotConfigMaps.readManifest(manifestMap);
    } catch (SnapshotVerificationException e) {
      violations.add(name + ": manifest does not parse: " + e.getMessage());
      return;
    }
    Manifest manifest = stored.manifest();
    if (polled) {
      Long before = highestPolledVersion.put(name, manifest.version());
      if (before != null && before > manifest.version()) {
        violations.add(name + ": version went back from " + before + " to " + manifest.version());
      }
    }
    MissingChunks chunks = new MissingChunks(SnapshotConfigMaps.chunkSource(client, namespace));
    try {
      SnapshotDecoder.decode(manifest, chunks);
      count(polled);
    } catch (SnapshotVerificationException | IOException e) {
      if (chunks.missing == null) {
        violations.add(name + " v" + manifest.version() + ": " + e.getMessage());
        return;
      }
      judgeMissing(name, stored, chunks, readAt, polled);
    } catch (KubernetesClientException e) {
      apiErrors.incrementAndGet();
    }
  }

  private void judgeMissing(
      String name, AnnouncedManifest stored, MissingChunks chunks, long readAt, boolean polled) {
    Duration sinceRead = Duration.ofNanos(chunks.missingAt - readAt);
    ConfigMap now;
    try {
      now = client.configMaps().inNamespace(namespace).withName(name).get();
    } catch (KubernetesClientException e) {
      apiErrors.incrementAndGet();
      return;
    }
    String json = now == null ? null : SnapshotConfigMaps.manifestJson(now);
    String what =
        name + " v" + stored.manifest().version() + ": chunk " + chunks.missing + " missing";
    if (stored.json().equals(json)) {
      violations.add(what + " while the manifest still names it");
    } else if (polled && sinceRead.plus(CLOCK_SLACK).compareTo(retainPrevious) < 0) {
      violations.add(
          what + " only " + sinceRead.toMillis() + " ms after the manifest was read as current");
    } else {
      staleReads.incrementAndGet(); // superseded and retired while this reader was reading
    }
  }

  private void count(boolean polled) {
    checks.incrementAndGet();
    (polled ? polledChecks : watchedChecks).incrementAndGet();
  }

  /**
   * Decodes the published snapshot of {@code filter} now, or returns null when it has none or it
   * does not verify.
   */
  BloomFilterBits current(String filter) {
    ConfigMap manifest =
        client
            .configMaps()
            .inNamespace(namespace)
            .withName(SnapshotNames.manifestName(filter))
            .get();
    if (manifest == null) {
      return null;
    }
    try {
      return SnapshotDecoder.decode(
          SnapshotConfigMaps.readManifest(manifest).manifest(),
          SnapshotConfigMaps.chunkSource(client, namespace));
    } catch (SnapshotVerificationException | IOException e) {
      return null;
    }
  }

  /** Verified reads. */
  long checks() {
    return checks.get();
  }

  long polledChecks() {
    return polledChecks.get();
  }

  long watchedChecks() {
    return watchedChecks.get();
  }

  /** Reads that found a chunk gone after its version was superseded and its grace period ended. */
  long staleReads() {
    return staleReads.get();
  }

  /** API calls that failed (not protocol violations: the API server was busy or restarting). */
  long apiErrors() {
    return apiErrors.get();
  }

  List<String> violations() {
    return List.copyOf(violations);
  }

  @Override
  public void close() throws InterruptedException {
    running.set(false);
    if (watch != null) {
      watch.close();
    }
    if (poller != null) {
      poller.join(10_000);
    }
    watchedReads.shutdown();
    watchedReads.awaitTermination(30, TimeUnit.SECONDS);
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  /** Remembers the first chunk the API server did not have, and when. */
  private static final class MissingChunks implements SnapshotDecoder.ChunkSource {
    private final SnapshotDecoder.ChunkSource delegate;
    private String missing;
    private long missingAt;

    MissingChunks(SnapshotDecoder.ChunkSource delegate) {
      this.delegate = delegate;
    }

    @Override
    public byte[] load(int index, Manifest.ChunkRef ref) throws IOException {
      byte[] bytes = delegate.load(index, ref);
      if (bytes == null && missing == null) {
        missing = ref.name();
        missingAt = System.nanoTime();
      }
      return bytes;
    }
  }
}
