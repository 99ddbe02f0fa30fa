package io.bloomoperator.publish;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.ByteSizes;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.time.Instant;

/**
 * Makes a freshly built filter the published one, each step once: compare it with the published
 * version (an identical payload only confirms the build record), check the namespace's budget,
 * number the new version, write it ({@link SnapshotStore}), and read back what is now published.
 * Leftovers of earlier attempts are the janitor's job, done before this runs.
 */
public final class Publication {

  /**
   * @param published what is published now, as read back after the write
   * @param newVersion whether a new version was written (false: identical payload confirmed)
   */
  public record Outcome(PublishedSnapshot published, boolean newVersion) {

    /** The published manifest. */
    public Manifest manifest() {
      return published.manifest();
    }
  }

  private final KubernetesClient client;
  private final BloomFilter owner;
  private final SigningKeySecret signingKey;
  private final long maxNamespaceBytes;

  /**
   * @param signingKey signs every manifest written, or null for unsigned manifests
   * @param maxNamespaceBytes budget of all published payloads of the owner's namespace
   */
  public Publication(
      KubernetesClient client,
      BloomFilter owner,
      SigningKeySecret signingKey,
      long maxNamespaceBytes) {
    this.client = client;
    this.owner = owner;
    this.signingKey = signingKey;
    this.maxNamespaceBytes = maxNamespaceBytes;
  }

  /**
   * @param current what was published when the build started (its resourceVersion guards the
   *     manifest write), or null
   * @param lastKnownVersion the highest version the status reports (0: none); new versions go above
   *     it even when the manifest was deleted, so readers never see a version reused
   * @throws PublishException with nothing of this attempt left behind
   */
  public Outcome publish(
      BloomFilterBits bits,
      long keyCount,
      PublishedSnapshot current,
      long lastKnownVersion,
      SnapshotStore.BuildRecord record,
      int chunkSize,
      Instant now)
      throws PublishException {
    SnapshotStore store = new SnapshotStore(client, owner, signingKey);
    Manifest published = current == null ? null : current.manifest();
    long size = SnapshotEncoder.payloadSize(bits);
    // The digest pass only pays off when a same-sized version exists; publishing computes the
    // digest again anyway while it writes the chunks.
    if (published != null
        && published.totalBytes() == size
        && sha256Of(bits).equals(published.sha256())) {
      // Byte-identical: publishing it again would only make every reader reload.
      store.confirm(current, record, bits, keyCount, chunkSize);
      return new Outcome(store.read(), false);
    }
    checkNamespaceBudget(size);
    long version = Math.max(published == null ? 0 : published.version(), lastKnownVersion) + 1;
    store.publish(bits, keyCount, version, chunkSize, current, record, now);
    return new Outcome(store.read(), true);
  }

  /** One namespace must not fill etcd for everyone: refuse what would exceed its budget. */
  private void checkNamespaceBudget(long size) throws PublishException {
    String namespace = owner.getMetadata().getNamespace();
    long others =
        NamespaceBudget.publishedBytesExcept(client, namespace, owner.getMetadata().getName());
    if (others + size > maxNamespaceBytes) {
      throw new PublishException(
          Reasons.NAMESPACE_QUOTA_EXCEEDED,
          "publishing "
              + ByteSizes.human(size)
              + " would take the snapshots of namespace "
              + namespace
              + " to "
              + ByteSizes.human(others + size)
              + ", over the operator limit of "
              + ByteSizes.human(maxNamespaceBytes)
              + " (BLOOM_MAX_NAMESPACE_BYTES); nothing was published",
          null);
    }
  }

  /** The payload digest, computed without keeping the payload (one buffer at a time). */
  private static String sha256Of(BloomFilterBits bits) {
    try {
      return SnapshotEncoder.writeTo(bits, OutputStream.nullOutputStream()).sha256();
    } catch (IOException e) {
      throw new UncheckedIOException("a null stream cannot fail", e);
    }
  }
}
