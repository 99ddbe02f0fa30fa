package io.bloomoperator.status;

import io.bloomoperator.api.BloomFilter;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The one memory of this process's own status writes: read-your-own-writes for the BloomFilter a
 * reconcile is handed, on every path (a reconcile, its error handler, the canary record it wrote
 * with its status). java-operator-sdk hands each reconcile its informer's copy, and that copy can
 * lag the status this operator has just written: the operator's own manifest write triggers the
 * next reconcile at once ({@link ManifestEvents}), usually before the watch has delivered the
 * status written after it. {@link StatusReport} writes back the whole status it starts from, so a
 * reconcile on such a copy would undo the last write (a new version's {@code retainedVersions}, an
 * approval acted on, a released build) and decide on it (which retained versions are trusted, what
 * is pending).
 *
 * <p>Remembers, per filter, the resourceVersion of the newest copy this process has from the API
 * server itself: the answer to its last status write, or its last read here. A handed copy with any
 * other resourceVersion is read again from the API server. resourceVersions are opaque, so
 * "different" is all that can be told; a copy that is newer (a spec change, the reader counts)
 * costs one read, a copy equal to the last write (the common case) none.
 *
 * <p>Memory: one resourceVersion per filter, for at most {@link #MAX_REMEMBERED} filters (the least
 * recently used is forgotten, and its next copy is trusted as handed).
 */
public final class OwnWrites {

  public static final int MAX_REMEMBERED = 100_000;

  private final Map<String, String> newest =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
          return size() > MAX_REMEMBERED;
        }
      };

  /**
   * Remembers {@code fromServer}, a copy the API server answered this process with (a status
   * write's answer, or a read).
   */
  public synchronized void remember(BloomFilter fromServer) {
    if (fromServer != null && fromServer.getMetadata().getResourceVersion() != null) {
      newest.put(fromServer.getMetadata().getUid(), fromServer.getMetadata().getResourceVersion());
    }
  }

  /**
   * {@code handed}, or the filter as the API server has it now when {@code handed} may lag what
   * this process wrote. A filter deleted meanwhile, or replaced by another of the same name, is
   * left as handed: its own events follow.
   */
  public BloomFilter current(BloomFilter handed, KubernetesClient client) {
    String uid = handed.getMetadata().getUid();
    String remembered;
    synchronized (this) {
      remembered = newest.get(uid);
    }
    if (remembered == null || remembered.equals(handed.getMetadata().getResourceVersion())) {
      return handed;
    }
    BloomFilter fresh =
        client
            .resources(BloomFilter.class)
            .inNamespace(handed.getMetadata().getNamespace())
            .withName(handed.getMetadata().getName())
            .get();
    if (fresh == null || !Objects.equals(uid, fresh.getMetadata().getUid())) {
      return handed;
    }
    remember(fresh);
    return fresh;
  }

  /** Forgets a deleted filter. */
  public synchronized void forget(BloomFilter filter) {
    newest.remove(filter.getMetadata().getUid());
  }
}
