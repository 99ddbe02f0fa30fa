package io.bloomoperator.publish;

import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Locale;

/**
 * Recognises the API server's answer when etcd is out of space: etcd refuses every write that would
 * grow its database beyond {@code --quota-backend-bytes} and raises its NOSPACE alarm, after which
 * it refuses all writes (reads and deletes still pass) until an administrator compacts, defragments
 * and disarms it. kube-apiserver passes etcd's error text on in a 500 answer.
 *
 * <p>Only etcd's own fixed text is matched; nothing else of the answer is ever repeated.
 */
public final class StorageFull {

  /** etcd's ErrNoSpace, as kube-apiserver forwards it ("etcdserver: mvcc: ..."). */
  static final String ETCD_NO_SPACE = "database space exceeded";

  /** What the operator says instead of the API server's answer. */
  public static final String DESCRIPTION =
      "etcd is out of space (the API server answered \"" + ETCD_NO_SPACE + "\")";

  private StorageFull() {}

  /** Whether {@code failure}, or one of its causes, is the API server reporting etcd full. */
  public static boolean causedBy(Throwable failure) {
    int depth = 0;
    for (Throwable t = failure; t != null && depth < 10; t = t.getCause(), depth++) {
      if (t instanceof KubernetesClientException kce
          && kce.getStatus() != null
          && mentionsNoSpace(kce.getStatus().getMessage())) {
        return true;
      }
      if (mentionsNoSpace(t.getMessage())) {
        return true;
      }
    }
    return false;
  }

  private static boolean mentionsNoSpace(String text) {
    return text != null && text.toLowerCase(Locale.ROOT).contains(ETCD_NO_SPACE);
  }
}
