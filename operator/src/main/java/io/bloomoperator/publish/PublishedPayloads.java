package io.bloomoperator.publish;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotEncoder;
import java.lang.ref.SoftReference;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The payload of the version each filter last published, as this operator built it: the next
 * publish computes its delta against it instead of reading the whole published chain back from the
 * API server (or object store) and decoding it.
 *
 * <p>Trust: a held payload is only ever this process's own build, never bytes read from the
 * cluster, and it is used only for the version it was published as, when the published manifest is
 * one {@link OwnManifests} trusts (its digest is the one this operator recorded) and names the same
 * version, payload digest and store. After a restart nothing is held and the chain is read back and
 * verified as before.
 *
 * <p>Memory: at most one payload per filter (a new publish replaces it), together at most {@code
 * maxBytes} (the least recently used go first), and only softly reachable: the JVM drops them
 * before it would run out of heap, so holding them never takes memory a build needs.
 */
public final class PublishedPayloads {

  private record Held(
      long version, String sha256, String store, long bytes, SoftReference<BloomFilterBits> bits) {}

  private final long maxBytes;
  private final Map<String, Held> byFilter = new LinkedHashMap<>(16, 0.75f, true);
  private long heldBytes;

  /** Holds payloads of at most {@code maxBytes} together; 0 holds none. */
  public PublishedPayloads(long maxBytes) {
    this.maxBytes = maxBytes;
  }

  /**
   * Remembers {@code bits} as the payload of {@code published}, the manifest this process just
   * wrote for the filter {@code uid}; anything held for it before is dropped.
   */
  public synchronized void published(String uid, Manifest published, BloomFilterBits bits) {
    forget(uid);
    if (published == null || bits == null) {
      return;
    }
    long bytes = SnapshotEncoder.payloadSize(bits);
    if (bytes > maxBytes) {
      return;
    }
    for (Iterator<Held> eldest = byFilter.values().iterator();
        heldBytes + bytes > maxBytes && eldest.hasNext(); ) {
      heldBytes -= eldest.next().bytes();
      eldest.remove();
    }
    byFilter.put(
        uid,
        new Held(
            published.version(),
            published.sha256(),
            published.store(),
            bytes,
            new SoftReference<>(bits)));
    heldBytes += bytes;
  }

  /**
   * The held payload of {@code published} (a manifest the caller trusts), or null when none is held
   * for exactly that version, payload and store.
   */
  public synchronized BloomFilterBits of(String uid, Manifest published) {
    Held held = byFilter.get(uid);
    if (held == null || published == null) {
      return null;
    }
    BloomFilterBits bits = held.bits().get();
    if (bits == null) {
      forget(uid);
      return null;
    }
    return held.version() == published.version()
            && held.sha256().equals(published.sha256())
            && Objects.equals(held.store(), published.store())
        ? bits
        : null;
  }

  /** Drops what is held for {@code uid} (a deleted filter, a failed publish). */
  public synchronized void forget(String uid) {
    Held gone = byFilter.remove(uid);
    if (gone != null) {
      heldBytes -= gone.bytes();
    }
  }
}
