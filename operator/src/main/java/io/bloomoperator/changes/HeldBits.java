package io.bloomoperator.changes;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The published payload of each filter with a change stream, kept between publishes in a file
 * instead of on the Java heap: the next stream publish adds its keys to it without reading the
 * published chain back from the cluster, and no filter's bits stay on the heap between builds.
 *
 * <p>Files live in one directory of the operator's own (an {@code emptyDir}; its pages count
 * against the pod's memory limit only as reclaimable page cache, and against its ephemeral
 * storage). Together they are bounded per namespace ({@code maxNamespaceBytes}) and in all ({@code
 * maxBytes}): a payload over either bound is not held, and that filter's stream publishes read the
 * published version back instead (slower, never wrong).
 *
 * <p>Trust: a file is only ever this process's own write, and it is read back only for the very
 * version, payload digest and store it was written for, verified against the published manifest
 * ({@link SnapshotDecoder#decodeWhole}); anything else is ignored and deleted. Files of an earlier
 * process are deleted at start.
 */
public final class HeldBits {

  private static final Logger LOG = LoggerFactory.getLogger(HeldBits.class);

  private record Held(
      String namespace, long version, String sha256, String store, long bytes, Path file) {}

  private final Path dir;
  private final long maxBytes;
  private final long maxNamespaceBytes;
  private final Map<String, Held> byUid = new HashMap<>();
  private long heldBytes;

  /**
   * @param dir where the files go (created; emptied of an earlier process's files)
   * @param maxBytes all files together at most
   * @param maxNamespaceBytes one namespace's files together at most
   */
  public HeldBits(Path dir, long maxBytes, long maxNamespaceBytes) {
    this.dir = dir;
    this.maxBytes = maxBytes;
    this.maxNamespaceBytes = maxNamespaceBytes;
    emptied(dir, "change-stream payloads", ".bits", ".tmp");
  }

  /**
   * Creates {@code dir} and deletes the files an earlier process left there with one of {@code
   * endings}: what they held is only ever valid in the process that wrote it.
   *
   * @throws IllegalStateException when the directory cannot be used (for {@code what})
   */
  static void emptied(Path dir, String what, String... endings) {
    try {
      Files.createDirectories(dir);
      try (var old = Files.list(dir)) {
        for (Path p : (Iterable<Path>) old::iterator) {
          for (String ending : endings) {
            if (p.getFileName().toString().endsWith(ending)) {
              Files.deleteIfExists(p);
            }
          }
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot use " + dir + " for " + what, e);
    }
  }

  /**
   * Keeps {@code bits}, the payload of {@code published}, for the filter {@code uid} of {@code
   * namespace}, replacing what was held for it; false (and nothing held) when a bound does not
   * admit it or the file cannot be written.
   */
  public boolean hold(String uid, String namespace, Manifest published, BloomFilterBits bits) {
    long bytes = SnapshotEncoder.payloadSize(bits);
    synchronized (this) {
      forget(uid);
      long inNamespace =
          byUid.values().stream()
              .filter(h -> h.namespace().equals(namespace))
              .mapToLong(Held::bytes)
              .sum();
      if (heldBytes + bytes > maxBytes || inNamespace + bytes > maxNamespaceBytes) {
        LOG.debug("{}: payload of {} bytes not held (bound reached)", namespace, bytes);
        return false;
      }
      heldBytes += bytes; // reserved before writing, so concurrent holds cannot overshoot
      byUid.put(uid, new Held(namespace, -1, "", null, bytes, null));
    }
    Path file = dir.resolve(safe(uid) + ".bits");
    Path tmp = dir.resolve(safe(uid) + ".tmp");
    try {
      try (OutputStream out =
          new BufferedOutputStream(
              Files.newOutputStream(
                  tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING),
              1 << 16)) {
        SnapshotEncoder.writeTo(bits, out);
      }
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      LOG.warn(
          "{}: change-stream payload could not be written to {}: {}", namespace, dir, e.toString());
      synchronized (this) {
        forget(uid);
      }
      return false;
    }
    synchronized (this) {
      Held reserved = byUid.get(uid);
      if (reserved == null || reserved.file() != null) {
        // Forgotten (or replaced) meanwhile: the file is nobody's.
        try {
          Files.deleteIfExists(file);
        } catch (IOException e) {
          LOG.debug("could not delete {}", file, e);
        }
        return false;
      }
      byUid.put(
          uid,
          new Held(
              namespace, published.version(), published.sha256(), published.store(), bytes, file));
    }
    return true;
  }

  /**
   * The held payload of {@code published} (a manifest the caller trusts), verified against it; null
   * when none is held for exactly that version, payload and store, or it does not verify.
   */
  public BloomFilterBits of(String uid, Manifest published) {
    Held held;
    synchronized (this) {
      held = byUid.get(uid);
    }
    if (held == null
        || held.file() == null
        || published == null
        || held.version() != published.version()
        || !held.sha256().equals(published.sha256())
        || !Objects.equals(held.store(), published.store())) {
      return null;
    }
    try (InputStream in = Files.newInputStream(held.file())) {
      return SnapshotDecoder.decodeWhole(published, in);
    } catch (IOException | SnapshotVerificationException | RuntimeException e) {
      LOG.warn("a held change-stream payload did not verify; reading the published version back");
      synchronized (this) {
        forget(uid);
      }
      return null;
    }
  }

  /** Drops what is held for {@code uid}. */
  public synchronized void forget(String uid) {
    Held gone = byUid.remove(uid);
    if (gone != null) {
      heldBytes -= gone.bytes();
      if (gone.file() != null) {
        try {
          Files.deleteIfExists(gone.file());
        } catch (IOException e) {
          LOG.debug("could not delete {}", gone.file(), e);
        }
      }
    }
  }

  /** Bytes held now, all namespaces together. */
  public synchronized long heldBytes() {
    return heldBytes;
  }

  /** A file name from a uid: only what a Kubernetes UID holds, anything else replaced. */
  private static String safe(String uid) {
    return uid.replaceAll("[^A-Za-z0-9-]", "_");
  }
}
