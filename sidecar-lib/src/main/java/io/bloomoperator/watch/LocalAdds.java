package io.bloomoperator.watch;

import io.bloomoperator.snapshot.SplitBlockBits;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
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
 * computes the key's fingerprint, the XXH64 of its UTF-8 bytes (of its 8 bytes for a Long: the hash
 * split-block filters use, computed from whatever form the key was given in), and tests one bit of
 * a presence bitset (8 bits per possible entry): only keys whose bit is set, all held keys and
 * about {@code held / (8 * maxEntries)} of the others, go on to probe a table of the held keys'
 * fingerprints (open addressing, linear probing). A fingerprint found there answers "held": a key
 * not held but with the same 64-bit fingerprint as a held one is a false positive (at most {@code
 * held / 2^64} per lookup; none for Long keys, whose XXH64 is a bijection), which a Bloom filter
 * may give; a held key is never missed. So no lookup decodes, copies or boxes its key, and none
 * allocates (but a String or char sequence outside ASCII, encoded to UTF-8 to hash it, as a
 * split-block filter's own lookup does). The hash table of keys is for sweeps only; lookups fall
 * back to it only if the fingerprint table could not take a key ({@link #MAX_SLOTS} reached). Slot
 * and bit are taken from the fingerprint mixed with a per-overlay random seed, so keys cannot be
 * chosen to pile up in one probe chain.
 *
 * <p><b>Concurrency.</b> {@link #size} is raised before a key is put and lowered only after it was
 * removed, and an add sets the key's bit and fingerprint before it returns, so a lookup never
 * misses a key whose add returned. Bits and fingerprints are not removed one by one (another held
 * key may share them): after a sweep removed keys, or when the fingerprint table is half full, a
 * new index (bitset and table) is announced ({@code rebuilding}), filled with the keys held, and
 * only then published. An add writes into the published index, then into the announced one if any,
 * then starts again if the published one changed meanwhile: a key put before the announcement is in
 * the rebuilding pass; a key put after sees the announcement, or, if that is already over, the new
 * published index. Table slots only ever go from empty to a fingerprint, so a probe that reaches an
 * empty slot has passed every slot an earlier add may have used. Entries are removed only after the
 * version that made them redundant was installed: a lookup that misses a removed key then finds
 * that version (or a later one) by reading the served snapshot again (see {@link
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
 * entry (128 KB for 100,000; 2 MB at most), the fingerprint table 16 to 32 bytes per held key (8
 * per slot, a power of two between 2 and 4 slots per key after a rebuild, at most {@link
 * #MAX_SLOTS} slots, 128 MB), both allocated at the first add and the table resized with the keys
 * held.
 */
final class LocalAdds<K> implements BloomFilterListener {

  /**
   * The most slots of a fingerprint table (128 MB, 8 million keys at half load); past that, keys
   * that find no slot are looked up in the hash table of keys.
   */
  static final int MAX_SLOTS = 1 << 24;

  /** The fewest slots of a fingerprint table. */
  static final int MIN_SLOTS = 64;

  // Atomic and acquire access to the words of a presence bitset and the slots of a table.
  private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class);

  // What a probe of the fingerprint table found.
  private static final int ABSENT = 0;
  private static final int HELD = 1;
  private static final int UNKNOWN = 2; // the table overflowed: ask the hash table

  private final LiveKeyType<K> keyType;
  private final int maxEntries;
  private final long ttlNanos;
  private final int maxKeyLength;
  private final LongSupplier nanoTime;
  private final long seed = new SecureRandom().nextLong(); // keys cannot aim at one probe chain

  private final ConcurrentHashMap<K, Long> addedAt = new ConcurrentHashMap<>();
  private final AtomicInteger size = new AtomicInteger();
  private final int presenceWords; // 8 bits per possible entry, in words
  private final int presenceShift; // 64 - log2(bits of the presence bitset)
  private volatile Index index; // null until the first add; replaced by rebuild only
  private volatile Index rebuilding; // the index rebuild fills before publishing it
  private final Object rebuildLock = new Object();
  private final LongAdder refused = new LongAdder();
  private final LongAdder expired = new LongAdder();
  private final LongAdder arrived = new LongAdder();
  private SnapshotSource source; // set before the source starts; read on the watcher thread only

  /**
   * What lookups read: a presence bitset and a table of fingerprints (0 = empty slot), replaced
   * together. Both only ever gain bits and fingerprints.
   */
  private static final class Index {
    final long[] presence;
    final long[] slots;
    final AtomicInteger used = new AtomicInteger();
    volatile boolean overflowed; // a fingerprint found no slot: lookups must ask the hash table

    Index(int presenceWords, int slots) {
      this.presence = new long[presenceWords];
      this.slots = new long[slots];
    }
  }

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
    this.presenceWords = (int) (bits >>> 6);
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
      publish(fingerprint(key));
      return true;
    }
    if (!reserveSlot()) {
      refused.increment();
      return false;
    }
    if (addedAt.put(key, now) != null) {
      size.decrementAndGet(); // another thread added the same key meanwhile: one slot is enough
    }
    publish(fingerprint(key));
    return true;
  }

  /**
   * Writes a fingerprint into the published index, again into a newer one if it was replaced
   * meanwhile, and rebuilds the index larger when its table is half full.
   */
  private void publish(long fingerprint) {
    Index written = index;
    if (written == null) {
      written = firstIndex();
    }
    while (true) {
      insert(written, fingerprint);
      Index next = rebuilding;
      if (next != null) {
        insert(next, fingerprint);
      }
      Index now = index;
      if (now == written) {
        break;
      }
      written = now; // rebuilt meanwhile: the announcement may have been missed
    }
    if (written.used.get() > written.slots.length / 2 && written.slots.length < MAX_SLOTS) {
      rebuild(written);
    }
  }

  private Index firstIndex() {
    synchronized (rebuildLock) {
      if (index == null) {
        index = new Index(presenceWords, MIN_SLOTS);
      }
      return index;
    }
  }

  /** Sets the fingerprint's presence bit and puts it in a free slot unless it is there already. */
  private void insert(Index into, long fingerprint) {
    long mixed = mix(fingerprint);
    int bit = (int) (mixed >>> presenceShift);
    WORDS.getAndBitwiseOr(into.presence, bit >>> 6, 1L << bit);
    long stored = stored(fingerprint);
    long[] slots = into.slots;
    int mask = slots.length - 1;
    int slot = (int) mixed & mask;
    for (int probed = 0; probed <= mask; probed++) {
      long found = (long) WORDS.getAcquire(slots, slot);
      if (found == 0) {
        found = (long) WORDS.compareAndExchange(slots, slot, 0L, stored);
        if (found == 0) {
          into.used.incrementAndGet();
          return;
        }
      }
      if (found == stored) {
        return;
      }
      slot = (slot + 1) & mask;
    }
    into.overflowed = true; // lookups now ask the hash table when the table does not answer
  }

  /**
   * Whether a key with that fingerprint is held: {@link #HELD}, {@link #ABSENT}, or {@link
   * #UNKNOWN} if the table overflowed and only the hash table of keys can tell. Allocation-free.
   */
  private int probe(long fingerprint) {
    Index read = index; // null only while the very first add has not returned
    if (read == null) {
      return ABSENT;
    }
    long mixed = mix(fingerprint);
    int bit = (int) (mixed >>> presenceShift);
    if (((long) WORDS.getAcquire(read.presence, bit >>> 6) & (1L << bit)) == 0) {
      return ABSENT;
    }
    long stored = stored(fingerprint);
    long[] slots = read.slots;
    int mask = slots.length - 1;
    int slot = (int) mixed & mask;
    for (int probed = 0; probed <= mask; probed++) {
      long found = (long) WORDS.getAcquire(slots, slot);
      if (found == stored) {
        return HELD;
      }
      if (found == 0) {
        break;
      }
      slot = (slot + 1) & mask;
    }
    return read.overflowed ? UNKNOWN : ABSENT;
  }

  /** The fingerprint mixed with this overlay's seed (murmur3's finalizer): slot and bit. */
  private long mix(long fingerprint) {
    long h = fingerprint ^ seed;
    h = (h ^ (h >>> 33)) * 0xFF51AFD7ED558CCDL;
    h = (h ^ (h >>> 33)) * 0xC4CEB9FE1A85EC53L;
    return h ^ (h >>> 33);
  }

  /** What a slot holds for a fingerprint: never 0, the empty slot (0 and 1 share a value). */
  private static long stored(long fingerprint) {
    return fingerprint == 0 ? 1 : fingerprint;
  }

  /** A held key's fingerprint: XXH64 of its UTF-8 bytes, or of a Long's 8 bytes. */
  private long fingerprint(K key) {
    return key instanceof Long value
        ? SplitBlockBits.hashLong(value)
        : SplitBlockBits.hashString((String) key);
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
   * Whether {@code key} is held: one volatile read when nothing is held, one bit of the presence
   * bitset for most keys that are not; allocation-free but for a String outside ASCII (encoded to
   * hash it).
   */
  boolean mightHold(K key) {
    if (size.get() == 0) {
      return false;
    }
    int found = probe(fingerprint(key));
    return found == HELD || (found == UNKNOWN && addedAt.containsKey(key));
  }

  /**
   * {@link #mightHold} for a Long key given as a primitive, allocation-free. Only for an overlay of
   * {@link LiveKeyType#LONG} keys.
   */
  @SuppressWarnings("unchecked")
  boolean mightHoldLong(long key) {
    if (size.get() == 0) {
      return false;
    }
    int found = probe(SplitBlockBits.hashLong(key));
    return found == HELD || (found == UNKNOWN && addedAt.containsKey((K) Long.valueOf(key)));
  }

  /**
   * {@link #mightHold} for a String key given as its UTF-8 bytes {@code utf8[offset, offset +
   * length)}, for an overlay of {@link LiveKeyType#STRING} keys: allocation-free. Valid UTF-8 is
   * answered as its decoded String would be; other bytes are answered for exactly those bytes (no
   * held String encodes to them).
   */
  boolean mightHoldUtf8(byte[] utf8, int offset, int length) {
    if (size.get() == 0) {
      return false;
    }
    int found = probe(SplitBlockBits.hashUtf8(utf8, offset, length));
    return found == HELD
        || (found == UNKNOWN
            && addedAt.containsKey(new String(utf8, offset, length, StandardCharsets.UTF_8)));
  }

  /**
   * {@link #mightHoldUtf8(byte[], int, int)} for the bytes {@code utf8[offset, offset + length)},
   * read by absolute index: the buffer's position stays.
   */
  boolean mightHoldUtf8(ByteBuffer utf8, int offset, int length) {
    if (size.get() == 0) {
      return false;
    }
    int found = probe(SplitBlockBits.hashUtf8(utf8, offset, length));
    if (found != UNKNOWN) {
      return found == HELD;
    }
    byte[] copy = new byte[length];
    utf8.get(offset, copy); // absolute: the buffer's position stays
    return addedAt.containsKey(new String(copy, StandardCharsets.UTF_8));
  }

  /**
   * {@link #mightHold} for a String key given as any char sequence: allocation-free for ASCII (any
   * other sequence is copied to hash it).
   */
  boolean mightHoldChars(CharSequence key) {
    if (size.get() == 0) {
      return false;
    }
    int found = probe(SplitBlockBits.hashChars(key));
    return found == HELD || (found == UNKNOWN && addedAt.containsKey(key.toString()));
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
      rebuild(null);
    }
  }

  /**
   * Replaces the index by one holding only the keys held now, with a table of 2 to 4 slots per key:
   * fingerprints of dropped keys stop answering, and a half-full table gets room. Called by the
   * watcher after a sweep removed keys ({@code full} null) and by an add that found {@code full}
   * half full (nothing to do if another thread replaced it meanwhile). See the class comment for
   * why adds racing this lose no key.
   */
  private void rebuild(Index full) {
    synchronized (rebuildLock) {
      Index old = index;
      if (old == null || (full != null && old != full)) {
        return;
      }
      long wanted = Math.max(MIN_SLOTS, Long.highestOneBit(2L * size.get() - 1) << 1);
      Index fresh = new Index(presenceWords, (int) Math.min(MAX_SLOTS, wanted));
      rebuilding = fresh; // from now on adds write here too
      for (K key : addedAt.keySet()) {
        insert(fresh, fingerprint(key));
      }
      index = fresh;
      rebuilding = null;
    }
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
