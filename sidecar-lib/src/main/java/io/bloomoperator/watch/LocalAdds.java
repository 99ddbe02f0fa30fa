package io.bloomoperator.watch;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * The keys this pod added with {@link LiveBloomFilter#addLocal} that no served version has shown
 * yet: the overlay a lookup consults when the served bits answer "absent".
 *
 * <p><b>Lifecycle of an entry.</b> Added by a request thread (refused, not evicting, when {@code
 * maxEntries} are held); dropped on the watcher thread by {@link #sweep}, either because the served
 * version answers "maybe present" for it (it arrived) or because it is older than the TTL (it never
 * arrived: counted in {@link #expired()}). Adding a key again restarts its TTL.
 *
 * <p><b>Lookups.</b> A lookup that finds the overlay empty pays one volatile read. Otherwise it
 * first tests one bit of a presence bitset (8 bits per possible entry, one hash): only keys whose
 * bit is set, all held keys and about {@code held / (8 * maxEntries)} of the others, probe the hash
 * table, so lookups of keys not held mostly pay one read of a small array instead of a probe that
 * misses the caches.
 *
 * <p><b>Concurrency.</b> {@link #size} is raised before a key is put and lowered only after it was
 * removed, and an add sets the key's bit before it returns, so {@link #mightHold} never misses a
 * key whose add returned. Bits are not cleared one by one (another held key may share one): after a
 * sweep removed keys, the watcher thread announces a new bitset ({@code rebuilding}), sets the bits
 * of the keys held in it, and only then publishes it. An add sets its bit in the published bitset,
 * then in the announced one if any, then starts again if the published one changed meanwhile: a key
 * put before the announcement is in the watcher's pass; a key put after sees the announcement, or,
 * if that is already over, the new published bitset. Entries are removed only after the version
 * that made them redundant was installed: a lookup that misses a removed key then finds that
 * version (or a later one) by reading the served snapshot again (see {@link
 * LiveBloomFilter#mightContain}).
 *
 * <p><b>Memory.</b> Per entry, a {@link ConcurrentHashMap} node (32 bytes), its share of the table,
 * the boxed time it was added (16 bytes) and the key itself, which the overlay keeps: a Long is 16
 * bytes, a String 40 bytes plus its length (one byte per Latin-1 character, two otherwise).
 * Measured with 100,000 entries (Java 17, compressed references, heap used before and after): 48 to
 * 66 bytes for the entry without its key, so about 130 bytes with a 36-character UUID string and 85
 * with a Long: 100,000 held UUIDs take about 13 MB. The worst case, every key at the key-length
 * bound and outside Latin-1, is about {@code maxEntries * (110 + 2 * maxKeyLength)} bytes (62 MB
 * with the defaults, 36 MB for Latin-1 keys). The presence bitset adds about a byte per possible
 * entry (128 KB for 100,000; 2 MB at most), allocated at the first add.
 */
final class LocalAdds<K> implements BloomFilterListener {

  // Atomic and acquire access to the words of a presence bitset.
  private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class);

  private final LiveKeyType<K> keyType;
  private final int maxEntries;
  private final long ttlNanos;
  private final int maxKeyLength;
  private final LongSupplier nanoTime;

  private final ConcurrentHashMap<K, Long> addedAt = new ConcurrentHashMap<>();
  private final AtomicInteger size = new AtomicInteger();
  private final int presenceShift; // 64 - log2(bits of the presence bitset)
  private volatile long[] presence; // null until the first add; replaced by rebuildPresence only
  private volatile long[] rebuilding; // the bitset rebuildPresence fills before publishing it
  private final LongAdder refused = new LongAdder();
  private final LongAdder expired = new LongAdder();
  private final LongAdder arrived = new LongAdder();
  private SnapshotSource source; // set before the source starts; read on the watcher thread only

  /**
   * @param maxEntries the most keys held at once; 0 refuses every add
   * @param ttl how long a key is held at most when no version shows it
   * @param maxKeyLength the longest String key accepted, in chars
   * @param nanoTime a monotonic clock in nanoseconds ({@code System::nanoTime} but in tests)
   */
  LocalAdds(
      LiveKeyType<K> keyType,
      int maxEntries,
      Duration ttl,
      int maxKeyLength,
      LongSupplier nanoTime) {
    this.keyType = Objects.requireNonNull(keyType, "keyType");
    if (maxEntries < 0) {
      throw new IllegalArgumentException("maxEntries must not be negative, got " + maxEntries);
    }
    if (ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("local add TTL must be positive, got " + ttl);
    }
    if (maxKeyLength < 1) {
      throw new IllegalArgumentException("maxKeyLength must be positive, got " + maxKeyLength);
    }
    this.maxEntries = maxEntries;
    this.ttlNanos = ttl.toNanos();
    this.maxKeyLength = maxKeyLength;
    this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
    // 8 bits per possible entry, rounded up to a power of two (one word at least, 2 MB at most):
    // about 1/8 of the keys not held pass the bitset when the overlay is full.
    long bits = Math.min(1L << 24, Long.highestOneBit(Math.max(64L, 8L * maxEntries) - 1) << 1);
    this.presenceShift = 64 - Long.numberOfTrailingZeros(bits);
  }

  /** The source whose served snapshot each sweep checks; called once, before it starts. */
  void attach(SnapshotSource source) {
    this.source = source;
  }

  /** A new version is served: drop what it shows (on the watcher thread, after the swap). */
  @Override
  public void onUpdate(long oldVersion, long newVersion, Duration loadDuration) {
    sweep(source.serving());
  }

  /** The periodic sweep for expired keys, against the snapshot served now. */
  void sweepServed() {
    sweep(source.serving());
  }

  /** Whether adds can ever be accepted (a bound of 0 turns local adds off). */
  boolean enabled() {
    return maxEntries > 0;
  }

  /**
   * Holds {@code key} until a version shows it or the TTL passes.
   *
   * @return false if the bound is reached (counted in {@link #refused()})
   * @throws IllegalArgumentException if the key is not of this filter's key type or is longer than
   *     {@code maxKeyLength}
   */
  boolean add(K key) {
    checkKey(key);
    Long now = nanoTime.getAsLong();
    // A key already held only gets a new time: it takes no second slot.
    if (addedAt.replace(key, now) != null) {
      setPresent(key);
      return true;
    }
    if (!reserveSlot()) {
      refused.increment();
      return false;
    }
    if (addedAt.put(key, now) != null) {
      size.decrementAndGet(); // another thread added the same key meanwhile: one slot is enough
    }
    setPresent(key);
    return true;
  }

  /** Sets the key's bit in the published bitset, again in a newer one if it was replaced. */
  private void setPresent(K key) {
    long[] words = presence;
    if (words == null) {
      words = allocatePresence();
    }
    int bit = presenceBit(key);
    while (true) {
      WORDS.getAndBitwiseOr(words, bit >>> 6, 1L << bit);
      long[] next = rebuilding;
      if (next != null) {
        WORDS.getAndBitwiseOr(next, bit >>> 6, 1L << bit);
      }
      long[] now = presence;
      if (now == words) {
        return;
      }
      words = now; // rebuilt meanwhile: the announcement may have been missed
    }
  }

  private synchronized long[] allocatePresence() {
    if (presence == null) {
      presence = new long[1 << (64 - presenceShift - 6)];
    }
    return presence;
  }

  /** The key's bit in the presence bitset. */
  private int presenceBit(K key) {
    return presenceBit(key.hashCode());
  }

  /** A hash code's bit in the presence bitset: mixed by Fibonacci hashing, the top bits. */
  private int presenceBit(int hashCode) {
    return (int) ((hashCode * 0x9E3779B97F4A7C15L) >>> presenceShift);
  }

  /** Raises {@link #size} unless the bound is reached. */
  private boolean reserveSlot() {
    while (true) {
      int held = size.get();
      if (held >= maxEntries) {
        return false;
      }
      if (size.compareAndSet(held, held + 1)) {
        return true;
      }
    }
  }

  /** Throws as {@link #add} does for a key it would not take. */
  void checkKey(K key) {
    Objects.requireNonNull(key, "key");
    // Raw or wildcard types get past the compiler; a foreign key would fail the sweep later.
    if (keyType == LiveKeyType.STRING) {
      if (!(key instanceof String string)) {
        throw new IllegalArgumentException(
            "this filter holds String keys, not " + key.getClass().getName());
      }
      if (string.length() > maxKeyLength) {
        throw new IllegalArgumentException(
            "a local add holds keys of at most "
                + maxKeyLength
                + " chars, got one of "
                + string.length());
      }
    } else if (!(key instanceof Long)) {
      throw new IllegalArgumentException(
          "this filter holds Long keys, not " + key.getClass().getName());
    }
  }

  /**
   * Whether {@code key} is held: allocation-free, one volatile read when nothing is held, and one
   * bit of the presence bitset for most keys that are not.
   */
  boolean mightHold(K key) {
    if (size.get() == 0) {
      return false;
    }
    long[] words = presence; // null only while the very first add is under way
    if (words != null) {
      int bit = presenceBit(key);
      if (((long) WORDS.getAcquire(words, bit >>> 6) & (1L << bit)) == 0) {
        return false;
      }
    }
    return addedAt.containsKey(key);
  }

  /**
   * {@link #mightHold} for a Long key given as a primitive: boxed only if its bit is set. Only for
   * an overlay of {@link LiveKeyType#LONG} keys.
   */
  @SuppressWarnings("unchecked")
  boolean mightHoldLong(long key) {
    if (size.get() == 0) {
      return false;
    }
    long[] words = presence;
    if (words != null) {
      int bit = presenceBit(Long.hashCode(key));
      if (((long) WORDS.getAcquire(words, bit >>> 6) & (1L << bit)) == 0) {
        return false;
      }
    }
    return addedAt.containsKey((K) Long.valueOf(key));
  }

  /**
   * {@link #mightHold} for a String key given as its UTF-8 bytes {@code utf8[offset, offset +
   * length)} (valid UTF-8), for an overlay of {@link LiveKeyType#STRING} keys: allocation-free
   * while nothing is held and for ASCII keys whose presence bit is clear (the String hash code of
   * ASCII bytes is computed from them); a key past the bitset, or not ASCII, is decoded to look it
   * up.
   */
  boolean mightHoldUtf8(byte[] utf8, int offset, int length) {
    if (size.get() == 0) {
      return false;
    }
    long[] words = presence;
    if (words != null) {
      int hash = 0;
      boolean ascii = true;
      for (int i = offset, end = offset + length; i < end; i++) {
        byte b = utf8[i];
        if (b < 0) {
          ascii = false;
          break;
        }
        hash = 31 * hash + b; // String.hashCode: ASCII bytes are the chars
      }
      if (ascii && !present(words, hash)) {
        return false;
      }
    }
    return addedAt.containsKey(new String(utf8, offset, length, StandardCharsets.UTF_8));
  }

  /**
   * {@link #mightHoldUtf8(byte[], int, int)} for the bytes {@code utf8[offset, offset + length)}.
   */
  boolean mightHoldUtf8(ByteBuffer utf8, int offset, int length) {
    if (size.get() == 0) {
      return false;
    }
    long[] words = presence;
    if (words != null) {
      int hash = 0;
      boolean ascii = true;
      for (int i = offset, end = offset + length; i < end; i++) {
        byte b = utf8.get(i);
        if (b < 0) {
          ascii = false;
          break;
        }
        hash = 31 * hash + b;
      }
      if (ascii && !present(words, hash)) {
        return false;
      }
    }
    byte[] copy = new byte[length];
    utf8.get(offset, copy); // absolute: the buffer's position stays
    return addedAt.containsKey(new String(copy, StandardCharsets.UTF_8));
  }

  /**
   * {@link #mightHold} for a String key given as any char sequence: allocation-free unless its
   * presence bit is set (its String hash code is computed from its chars).
   */
  boolean mightHoldChars(CharSequence key) {
    if (size.get() == 0) {
      return false;
    }
    long[] words = presence;
    if (words != null) {
      int hash = 0;
      for (int i = 0, length = key.length(); i < length; i++) {
        hash = 31 * hash + key.charAt(i); // String.hashCode
      }
      if (!present(words, hash)) {
        return false;
      }
    }
    return addedAt.containsKey(key.toString());
  }

  /** Whether the presence bit of a key with that hash code is set in {@code words}. */
  private boolean present(long[] words, int hashCode) {
    int bit = presenceBit(hashCode);
    return ((long) WORDS.getAcquire(words, bit >>> 6) & (1L << bit)) != 0;
  }

  /**
   * Drops the keys {@code served} answers "maybe present" for (arrived) and those held longer than
   * the TTL (expired). Run on the watcher thread after each swap and periodically; never on the
   * lookup path. {@code served} must be the snapshot being served when this runs, or an older one.
   */
  void sweep(ServedSnapshot served) {
    if (size.get() == 0) {
      return;
    }
    long now = nanoTime.getAsLong();
    boolean removed = false;
    for (Map.Entry<K, Long> entry : addedAt.entrySet()) {
      K key = entry.getKey();
      Long added = entry.getValue();
      if (served != null && keyType.mightContain(served.bits(), key)) {
        if (addedAt.remove(key) != null) {
          size.decrementAndGet();
          arrived.increment();
          removed = true;
        }
      } else if (now - added >= ttlNanos && addedAt.remove(key, added)) {
        // remove(key, added): a key added again meanwhile keeps its new time.
        size.decrementAndGet();
        expired.increment();
        removed = true;
      }
    }
    if (removed) {
      rebuildPresence();
    }
  }

  /**
   * Replaces the bitset by one holding only the keys held now, so bits of dropped keys stop sending
   * lookups to the hash table. Watcher thread only (it alone removes keys); see the class comment
   * for why adds racing this lose no bit.
   */
  private void rebuildPresence() {
    long[] old = presence;
    if (old == null) {
      return;
    }
    long[] fresh = new long[old.length];
    rebuilding = fresh; // from now on adds set their bits here too
    for (K key : addedAt.keySet()) {
      int bit = presenceBit(key);
      WORDS.getAndBitwiseOr(fresh, bit >>> 6, 1L << bit);
    }
    presence = fresh;
    rebuilding = null;
  }

  /** Keys held now. */
  int size() {
    return size.get();
  }

  /** Adds refused because {@code maxEntries} were held (or local adds are off). */
  long refused() {
    return refused.sum();
  }

  /** Keys dropped because the TTL passed before any served version showed them. */
  long expired() {
    return expired.sum();
  }

  /** Keys dropped because a served version showed them. */
  long arrived() {
    return arrived.sum();
  }

  int maxEntries() {
    return maxEntries;
  }

  Duration ttl() {
    return Duration.ofNanos(ttlNanos);
  }

  int maxKeyLength() {
    return maxKeyLength;
  }

  /**
   * How often the watcher sweeps for expired keys: a tenth of the TTL, between 10 ms and one
   * minute, so a key that never arrives is held at most that much longer than the TTL.
   */
  Duration sweepInterval() {
    long tenth = ttlNanos / 10;
    return Duration.ofNanos(
        Math.max(
            Duration.ofMillis(10).toNanos(), Math.min(tenth, Duration.ofMinutes(1).toNanos())));
  }
}
