package io.bloomoperator.changes;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The positive evidence behind a counting shadow's deletes: a multiset of the keys counted into it
 * (a full build's keys and the stream's adds), as keyed 64-bit fingerprints with an occurrence
 * count each. A delete decrements a key's counters only while its fingerprint's count is above 0,
 * so, for every key, the decrements applied to its bit positions never exceed the increments made
 * for it, and no live key loses a bit to a delete of a key that was never counted (a false
 * negative). The counters alone cannot say that: a key never counted has all its counters above 0
 * with the filter's false-positive probability, and an attacker who reads the filter can pick such
 * keys.
 *
 * <p>The fingerprint is SipHash-2-4 of the key's bytes (UTF-8 text, or a Long key's 8 bytes) under
 * a 128-bit secret drawn from {@link SecureRandom} for each shadow: someone who reads the filter,
 * or this code, cannot choose a key that collides with a member. A key that is no member matches a
 * member's fingerprint with probability at most n/2^64 per delete (n distinct keys counted), and
 * must then also pass the counters test.
 *
 * <p>Layout, in one memory-mapped file ({@link MappedFile}): an open-addressing table (linear
 * probing) of {@code slots} 8-byte fingerprints (0: empty), then one count byte a slot. A count
 * saturates at {@link #SATURATED} and is never decremented again (its true count is unknown). A
 * slot is never freed: a fingerprint at count 0 is a key deleted as often as it was counted. The
 * table holds at most {@code maxKeys} distinct fingerprints (the build's key count plus {@link
 * #HEADROOM_DIVISOR a quarter}), at most {@link #MAX_LOAD_PERCENT} % of its slots; past that an add
 * is refused and the shadow stops counting ({@link CountingShadow}).
 */
final class KeyFingerprints implements AutoCloseable {

  /** A count at this value is saturated: never incremented or decremented again. */
  static final int SATURATED = 255;

  /** The table is sized to be at most this full at its bound: about 2.5 probes a lookup. */
  static final int MAX_LOAD_PERCENT = 80;

  /** Distinct keys beyond the build's: a quarter more (stream adds of new keys until the next). */
  static final int HEADROOM_DIVISOR = 4;

  /** Headroom at least, for small builds. */
  static final long MIN_HEADROOM = 1024;

  private static final VarHandle LONG_LE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  private final MappedFile file;
  private final long slots;
  private final long maxKeys;
  private final long k0;
  private final long k1;
  private final long mask;
  private final AtomicLong distinct = new AtomicLong();

  /** Distinct keys a table for a build of {@code keys} keys holds at most. */
  static long maxKeys(long keys) {
    return keys + Math.max(MIN_HEADROOM, keys / HEADROOM_DIVISOR);
  }

  /** Slots of a table for a build of {@code keys} keys. */
  static long slots(long keys) {
    return (maxKeys(keys) * 100 + MAX_LOAD_PERCENT - 1) / MAX_LOAD_PERCENT;
  }

  /** Bytes of a table for a build of {@code keys} keys: 9 a slot (fingerprint and count). */
  static long bytesFor(long keys) {
    long slots = slots(keys);
    return slots * Long.BYTES + ((slots + 3) & ~3L);
  }

  /** An empty table for a build of {@code keys} keys in {@code path}, with a new secret. */
  static KeyFingerprints create(Path path, long keys, SecureRandom random) throws IOException {
    return create(path, keys, random, -1L);
  }

  /**
   * The same with fingerprints cut to the bits of {@code mask}: tests use a few bits to make
   * collisions happen; the operator uses all 64.
   */
  static KeyFingerprints create(Path path, long keys, SecureRandom random, long mask)
      throws IOException {
    return new KeyFingerprints(
        MappedFile.create(path, bytesFor(keys)),
        slots(keys),
        maxKeys(keys),
        random.nextLong(),
        random.nextLong(),
        mask);
  }

  private KeyFingerprints(MappedFile file, long slots, long maxKeys, long k0, long k1, long mask) {
    this.file = file;
    this.slots = slots;
    this.maxKeys = maxKeys;
    this.k0 = k0;
    this.k1 = k1;
    this.mask = mask;
  }

  /** The file's size. */
  long bytes() {
    return file.bytes();
  }

  /** Distinct fingerprints held. */
  long distinct() {
    return distinct.get();
  }

  /** Distinct fingerprints held at most. */
  long maxKeys() {
    return maxKeys;
  }

  /** The fingerprint of {@code length} bytes of {@code bytes} from {@code offset} (never 0). */
  long of(byte[] bytes, int offset, int length) {
    return nonZero(sipHash24(k0, k1, bytes, offset, length) & mask);
  }

  /**
   * The fingerprint of a long key: that of its 8 little-endian bytes, hashed without writing them
   * anywhere (a full build counts every key through here).
   */
  long of(long key) {
    return nonZero(sipHash24(k0, k1, null, 0, Long.BYTES, key) & mask);
  }

  private static long nonZero(long h) {
    return h == 0 ? 1 : h; // 0 marks an empty slot
  }

  /**
   * Counts one occurrence of {@code fingerprint}; false when it is new and the table holds its
   * bound of distinct keys (nothing changed). Safe for several threads at once.
   */
  boolean add(long fingerprint) {
    return add(fingerprint, false);
  }

  /**
   * As {@link #add(long)}, but a fingerprint already held is pinned (its count saturated, so it is
   * never taken again) instead of counted once more: what a full build does with an ID it reads in
   * more than one row (see {@link CountingShadow}).
   */
  boolean addPinningRepeats(long fingerprint) {
    return add(fingerprint, true);
  }

  private boolean add(long fingerprint, boolean pinRepeats) {
    boolean reserved = false;
    boolean inserted = false;
    for (long i = Long.remainderUnsigned(fingerprint, slots); ; i = i + 1 == slots ? 0 : i + 1) {
      long at = i * Long.BYTES;
      long held = file.getLong(at);
      if (held == 0) {
        if (!reserved) {
          if (distinct.incrementAndGet() > maxKeys) {
            distinct.decrementAndGet();
            return false;
          }
          reserved = true;
        }
        if (!file.casLong(at, 0, fingerprint)) {
          held = file.getLong(at); // another thread took the slot: it may be for this key
        } else {
          held = fingerprint;
          reserved = false;
          inserted = true;
        }
      }
      if (held == fingerprint) {
        if (reserved) {
          distinct.decrementAndGet(); // another thread added the same key first
        }
        if (pinRepeats && !inserted) {
          saturate(i);
        } else {
          bump(i);
        }
        return true;
      }
    }
  }

  /** The slot holding {@code fingerprint}, or -1. */
  long find(long fingerprint) {
    for (long i = Long.remainderUnsigned(fingerprint, slots); ; i = i + 1 == slots ? 0 : i + 1) {
      long held = file.getLong(i * Long.BYTES);
      if (held == fingerprint) {
        return i;
      }
      if (held == 0) {
        return -1;
      }
    }
  }

  /** The occurrence count of the key in {@code slot}. */
  int count(long slot) {
    long at = countAt(slot);
    return (file.getInt(at & ~3L) >>> shift(slot)) & 0xFF;
  }

  /** Takes one occurrence from {@code slot}, whose count is above 0 and not saturated. */
  void take(long slot) {
    long at = countAt(slot) & ~3L;
    int shift = shift(slot);
    while (true) {
      int word = file.getInt(at);
      int count = (word >>> shift) & 0xFF;
      if (count == 0 || count == SATURATED) {
        throw new IllegalStateException("no occurrence to take");
      }
      if (file.casInt(at, word, word - (1 << shift))) {
        return;
      }
    }
  }

  private void saturate(long slot) {
    long at = countAt(slot) & ~3L;
    int shift = shift(slot);
    while (true) {
      int word = file.getInt(at);
      if (((word >>> shift) & 0xFF) == SATURATED
          || file.casInt(at, word, word | (SATURATED << shift))) {
        return;
      }
    }
  }

  private void bump(long slot) {
    long at = countAt(slot) & ~3L;
    int shift = shift(slot);
    while (true) {
      int word = file.getInt(at);
      if (((word >>> shift) & 0xFF) == SATURATED || file.casInt(at, word, word + (1 << shift))) {
        return;
      }
    }
  }

  private long countAt(long slot) {
    return slots * Long.BYTES + slot;
  }

  private static int shift(long slot) {
    return (int) (slot & 3) << 3;
  }

  @Override
  public void close() {
    file.close();
  }

  /** SipHash-2-4 (Aumasson and Bernstein) of {@code length} bytes under the key (k0, k1). */
  static long sipHash24(long k0, long k1, byte[] bytes, int offset, int length) {
    return sipHash24(k0, k1, bytes, offset, length, 0);
  }

  /**
   * SipHash-2-4 of {@code bytes[offset, +length)}, or, when {@code bytes} is null, of the 8
   * little-endian bytes of {@code word} ({@code length} 8). State in locals: nothing is allocated
   * per key.
   */
  private static long sipHash24(long k0, long k1, byte[] bytes, int offset, int length, long word) {
    long v0 = 0x736f6d6570736575L ^ k0;
    long v1 = 0x646f72616e646f6dL ^ k1;
    long v2 = 0x6c7967656e657261L ^ k0;
    long v3 = 0x7465646279746573L ^ k1;
    int words = length >>> 3;
    // Steps: each 8-byte word, the last word (the tail and the length), then the finalization.
    for (int step = 0; step <= words + 1; step++) {
      long m = 0;
      int rounds = 2;
      if (step < words) {
        m = bytes == null ? word : (long) LONG_LE.get(bytes, offset + 8 * step);
      } else if (step == words) {
        m = ((long) length) << 56;
        for (int i = 0; i < (length & 7); i++) {
          m |= (bytes[offset + 8 * words + i] & 0xFFL) << (8 * i);
        }
      } else {
        v2 ^= 0xFF;
        rounds = 4;
      }
      v3 ^= m;
      for (int r = 0; r < rounds; r++) {
        v0 += v1;
        v1 = Long.rotateLeft(v1, 13) ^ v0;
        v0 = Long.rotateLeft(v0, 32);
        v2 += v3;
        v3 = Long.rotateLeft(v3, 16) ^ v2;
        v0 += v3;
        v3 = Long.rotateLeft(v3, 21) ^ v0;
        v2 += v1;
        v1 = Long.rotateLeft(v1, 17) ^ v2;
        v2 = Long.rotateLeft(v2, 32);
      }
      v0 ^= m;
    }
    return v0 ^ v1 ^ v2 ^ v3;
  }
}
