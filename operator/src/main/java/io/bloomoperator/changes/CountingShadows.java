package io.bloomoperator.changes;

import io.bloomoperator.snapshot.BitPositions;
import io.bloomoperator.snapshot.KeyType;
import java.io.IOException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The counting shadows of the filters with {@code spec.changes.deletions: Counting}, one per
 * filter, in files of the operator's own directory (the one {@link HeldBits} uses, an {@code
 * emptyDir}): bounded per namespace ({@code maxNamespaceBytes}) and in all ({@code maxBytes}), with
 * a fair share of the total while a namespace waits for room ({@link CountingRoom}), checked before
 * a file is created. A shadow's size is its counters (half a byte per filter bit) and its key
 * fingerprints (9 bytes a slot, {@link KeyFingerprints}), both charged. A shadow over a bound is
 * refused, and that filter's deletes wait for full builds ({@code Rebuild}) with the status saying
 * why; nothing is allocated for it.
 *
 * <p>Memory: the files are mapped; their dirty pages count against the pod's memory limit as page
 * cache until the kernel writes them back, then as reclaimable cache; against ephemeral storage as
 * the pages written (the files are sparse).
 *
 * <p>A shadow is only valid in the process that counted it: the files of an earlier process are
 * deleted at start, so after a restart or a leader change there is none until the next full build.
 */
public final class CountingShadows implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(CountingShadows.class);

  /**
   * Bits to clear remembered until a publish carries them, per shadow: 8 bytes each, 8 MiB of heap
   * at most, and at most {@link StreamLimits#streamsPerNamespace()} shadows a namespace. A full
   * read of deletes (BLOOM_STREAM_READ_BYTES of short keys, k bits each) fits; beyond it a bit
   * stays set until the next full build, a false positive only.
   */
  static final int MAX_PENDING_CLEARS = 1 << 20;

  private record Entry(String namespace, CountingShadow shadow, boolean following) {}

  /** A shadow to count a build into, or why there is none. */
  public record Reserved(CountingShadow shadow, String refusal) {}

  private final Path dir;
  private final CountingRoom room;
  private final Map<String, Entry> byUid = new HashMap<>();

  /** Why a filter's shadow was stopped since its last full build (the operator's own text). */
  private final Map<String, String> stoppedWhy = new HashMap<>();

  /** Each shadow's fingerprint secret comes from here. */
  private final SecureRandom random = new SecureRandom();

  /**
   * @param dir where the files go (created; emptied of an earlier process's shadows)
   */
  public CountingShadows(Path dir, long maxBytes, long maxNamespaceBytes) {
    this.dir = dir;
    this.room = new CountingRoom(maxBytes, maxNamespaceBytes);
    HeldBits.emptied(dir, "counting shadows", ".counts", ".prints");
  }

  /**
   * A new, zeroed shadow for a build of {@code keys} keys of filter {@code uid} in {@code
   * namespace} (replacing the one it had: deletes wait for this build until it is published), or
   * the reason there is none: a bound does not admit its size, or the files cannot be made.
   */
  public synchronized Reserved reserve(
      String uid, String namespace, BitPositions positions, KeyType keyType, long keys) {
    forget(uid);
    stoppedWhy.remove(uid);
    long bytes = CountingShadow.bytesFor(positions.numBits(), keys);
    String refused = room.take(uid, namespace, bytes);
    if (refused != null) {
      return new Reserved(null, refused);
    }
    try {
      CountingShadow shadow =
          CountingShadow.create(
              dir.resolve(safe(uid) + ".counts"),
              dir.resolve(safe(uid) + ".prints"),
              positions,
              keyType,
              keys,
              MAX_PENDING_CLEARS,
              random);
      byUid.put(uid, new Entry(namespace, shadow, false));
      return new Reserved(shadow, null);
    } catch (IOException | RuntimeException e) {
      room.release(uid);
      LOG.warn("{}: counting shadow could not be created in {}: {}", namespace, dir, e.toString());
      return new Reserved(null, "the counting shadow files could not be created");
    }
  }

  /**
   * {@code shadow}, reserved for {@code uid} and counted by a build now published as the version of
   * payload {@code sha256}, follows the stream from {@code position}; false when it is no longer
   * the one reserved (forgotten meanwhile).
   */
  public synchronized boolean follow(
      String uid, CountingShadow shadow, StreamPosition position, String sha256) {
    Entry entry = byUid.get(uid);
    if (entry == null || entry.shadow() != shadow) {
      return false;
    }
    shadow.follow(position, sha256);
    byUid.put(uid, new Entry(entry.namespace(), shadow, true));
    return true;
  }

  /** The shadow following filter {@code uid}'s published versions, or null. */
  public synchronized CountingShadow of(String uid) {
    Entry entry = byUid.get(uid);
    return entry == null || !entry.following() ? null : entry.shadow();
  }

  /**
   * Drops filter {@code uid}'s shadow because of {@code why}, remembered until its next full build
   * ({@link #stoppedWhy}).
   */
  public synchronized void stop(String uid, String why) {
    forget(uid);
    stoppedWhy.put(uid, why);
  }

  /** Why filter {@code uid}'s shadow was stopped since its last full build, or null. */
  public synchronized String stoppedWhy(String uid) {
    return stoppedWhy.get(uid);
  }

  /** Filter {@code uid} is gone or no longer counts: its shadow and what was said of it go. */
  public synchronized void gone(String uid) {
    forget(uid);
    room.gone(uid);
    stoppedWhy.remove(uid);
  }

  /**
   * Drops filter {@code uid}'s shadow, if any (its file deleted and its bytes free); whether it
   * waits for room is kept (only its next reservation or {@link #gone} changes that).
   */
  public synchronized void forget(String uid) {
    Entry gone = byUid.remove(uid);
    room.release(uid);
    if (gone != null) {
      gone.shadow().close();
    }
  }

  /** Bytes of all shadows now. */
  public synchronized long bytes() {
    return room.bytes();
  }

  @Override
  public synchronized void close() {
    byUid.keySet().forEach(room::gone);
    byUid.values().forEach(e -> e.shadow().close());
    byUid.clear();
  }

  private static String safe(String uid) {
    return uid.replaceAll("[^A-Za-z0-9-]", "_");
  }
}
