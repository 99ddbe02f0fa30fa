package io.bloomoperator.watch;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotLimits;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;

/**
 * A Bloom filter that follows the snapshot the bloom-operator publishes for one BloomFilter
 * resource, swapping in each new verified version while it keeps answering. Created by {@link
 * BloomFilterWatcher}, or fixed in memory by {@link #fixed} (a test double).
 *
 * <pre>{@code
 * LiveBloomFilter<String> ids = BloomFilterWatcher.watch(client, "shop", "product-ids", LiveKeyType.STRING);
 * if (!ids.mightContain(id)) return notFound();
 * }</pre>
 *
 * <p>Like Guava's {@code BloomFilter}, it offers an approximate containment test with one-sided
 * error: if {@link #mightContain} returns {@code false}, the key is definitely not in the served
 * snapshot; if it returns {@code true}, the key probably is (false positives occur at about the
 * rate the BloomFilter resource asks for, see {@link ManifestView#expectedFpp()}). It answers
 * exactly as {@code BloomFilter.mightContain} would on the same snapshot ({@code spec.format:
 * Guava}), or as Parquet's split-block Bloom filter would ({@code SplitBlock}); a snapshot in
 * either format is served, and a change of format is picked up like any new version, without a
 * restart.
 *
 * <p><b>Guarantees.</b>
 *
 * <ul>
 *   <li>Only verified snapshots are served: every chunk's SHA-256, the total digest, the header,
 *       the key type and, when keys are trusted, the manifest signature are checked first. A
 *       snapshot that fails is never served; the previous one stays, and the failure is counted
 *       ({@link #failures()}) and reported to the {@link BloomFilterListener}s. A delta applied in
 *       place ({@link #deltasAppliedInPlace()}) has its chunks, header and signature checked first;
 *       the total digest of the result is checked on a copy within {@link
 *       BloomFilterWatcher.Builder#inPlaceDeltas the check interval}, and a mismatch reloads the
 *       version from scratch ({@link #inPlaceDigestMismatches()}).
 *   <li>Each lookup sees one complete version, the old or the new, never a mix: the served snapshot
 *       is one immutable object behind a volatile reference, replaced in a single write. The one
 *       exception is a delta of the stable chain that only turns bits on: it is set in the served
 *       bits in place, so a lookup meanwhile may see some of its bits and not others; every key of
 *       the older version is answered "maybe present" throughout, and a key it adds once its
 *       version is served.
 *   <li>Before the first snapshot, lookups answer according to {@link BeforeFirstSnapshot}.
 *   <li>Failures of the API server never reach callers of {@link #mightContain}: they only delay
 *       the next version.
 * </ul>
 *
 * <p><b>Thread safety.</b> All methods may be called from any thread. {@link #mightContain} takes
 * no lock and allocates nothing. Loading, verifying and swapping happen on one background daemon
 * thread per filter, which also calls the listeners. {@link #close()} stops watching; lookups after
 * that keep answering from the last snapshot.
 *
 * <p><b>Observed false positives.</b> For keys it answered "maybe present", the application may
 * report whether its store really had them ({@link #recordOutcome}); {@link
 * #observedFalsePositives()} then estimates the false-positive rate the served version actually
 * has, next to the expected one of its manifest. The counters restart with each version. The
 * metrics of {@code io.bloomoperator.watch.metrics} (optional Micrometer) export both.
 *
 * <p><b>Local adds.</b> A pod that creates an ID usually serves the next request for it, long
 * before a published version holds it. {@link #addLocal} makes this filter answer "maybe present"
 * for the key at once; the key is held in a bounded overlay next to the served snapshot until a
 * served version answers "maybe present" for it, or until a TTL passes (counted: {@link
 * #localAddsExpired()}, a sign that the ID never reached the published filter). The overlay is
 * consulted only when the served bits answer "absent", so "maybe present" answers pay nothing, and
 * an empty overlay costs a volatile read; see {@link #addLocal} for the bounds and {@link
 * BloomFilterWatcher.Builder#localAdds} to configure them.
 *
 * @param <K> the key type: {@code String} or {@code Long}, see {@link LiveKeyType}
 */
public final class LiveBloomFilter<K> implements AutoCloseable {

  /** {@link #currentVersion()} before the first snapshot; also a listener's "no version". */
  public static final long NO_VERSION = -1;

  /** The false-positive rate a {@link #fixed} filter is sized for. */
  public static final double FIXED_FPP = 1e-9;

  private final String namespace;
  private final String filterName;
  private final LiveKeyType<K> keyType;
  private final BeforeFirstSnapshot beforeFirstSnapshot;
  private final boolean answerBeforeFirstSnapshot;
  private final SnapshotSource loop; // loads and swaps; this class only reads what it serves
  private final ReaderCounters counters;
  private final LocalAdds<K> localAdds;
  // localAdds, or null when local adds are off: the lookup path then skips the overlay entirely.
  private final LocalAdds<K> overlay;

  // The counters' adders, held directly: the lookup path increments them.
  private final LongAdder lookups;
  private final LongAdder maybePresent;

  LiveBloomFilter(
      String namespace,
      String filterName,
      LiveKeyType<K> keyType,
      BeforeFirstSnapshot beforeFirstSnapshot,
      SnapshotSource loop,
      ReaderCounters counters,
      LocalAdds<K> localAdds) {
    this.namespace = namespace;
    this.filterName = filterName;
    this.keyType = keyType;
    this.beforeFirstSnapshot = beforeFirstSnapshot;
    this.answerBeforeFirstSnapshot = beforeFirstSnapshot == BeforeFirstSnapshot.FAIL_OPEN;
    this.loop = loop;
    this.counters = counters;
    this.lookups = counters.lookups;
    this.maybePresent = counters.maybePresent;
    this.localAdds = localAdds;
    this.overlay = localAdds.enabled() ? localAdds : null;
  }

  /**
   * A filter that serves one snapshot built from {@code keys} and never changes: a test double, so
   * that code (or a Spring application) taking a {@code LiveBloomFilter} runs without a cluster. It
   * is ready at once (version 1, one load, no failures), answers true for every key given and, for
   * others, false but with a false-positive rate of about {@value #FIXED_FPP}, so tests can rely on
   * both answers. {@link #namespace()} is empty: it follows nothing; {@link #close()} does nothing.
   * The keys are copied into the filter's bits, not kept. {@link #addLocal} works with the default
   * bounds, but as no version ever follows and no thread sweeps, a key added locally stays until
   * the filter is dropped.
   *
   * @param filterName the name it reports (health details, metric tags)
   * @throws NullPointerException if an argument or a key is null
   * @throws IllegalArgumentException if a key's type does not match {@code keyType} (which the
   *     compiler only misses for raw or wildcard types)
   */
  public static <K> LiveBloomFilter<K> fixed(
      String filterName, LiveKeyType<K> keyType, Collection<? extends K> keys) {
    Objects.requireNonNull(filterName, "filterName");
    Objects.requireNonNull(keyType, "keyType");
    BloomFilterBits.Builder builder =
        BloomFilterBits.builder(
            keyType.keyType(), BloomFilterSizing.forKeys(Math.max(1, keys.size()), FIXED_FPP));
    for (K key : keys) {
      builder.put(Objects.requireNonNull(key, "key"));
    }
    return serving(filterName, keyType, builder.build(), keys.size());
  }

  /**
   * A filter that serves, and never changes from, a payload file written by {@code kubectl bloom
   * export} (or by Guava's {@code BloomFilter.writeTo} / a Parquet split-block bitset): for tests
   * and local runs of an application against a real filter without a cluster. Like {@link #fixed}
   * it is ready at once, reports version 1 and follows nothing; its key count is estimated from the
   * bits. The file's size is checked against this heap's snapshot limit before it is read, and its
   * layout is checked as it is parsed; there is no manifest, so no digest or signature.
   *
   * @param format the file's layout: {@code Guava} (header + words) or {@code SplitBlock}
   * @throws IOException if the file cannot be read, is larger than a quarter of this heap, or is
   *     not a well-formed payload of {@code format} and {@code keyType}
   */
  public static <K> LiveBloomFilter<K> fromFile(
      String filterName, LiveKeyType<K> keyType, FilterFormat format, Path payload)
      throws IOException {
    Objects.requireNonNull(filterName, "filterName");
    Objects.requireNonNull(keyType, "keyType");
    Objects.requireNonNull(format, "format");
    long size = Files.size(payload);
    long limit = SnapshotLimits.forThisHeap().maxTotalBytes();
    if (size > limit) {
      throw new IOException(
          payload + " holds " + size + " bytes, more than this heap's snapshot limit of " + limit);
    }
    BloomFilterBits bits;
    try {
      bits = SnapshotDecoder.decodePayload(Files.readAllBytes(payload), keyType.keyType(), format);
    } catch (SnapshotVerificationException e) {
      throw new IOException(
          payload + " is not a " + format.crdName() + " payload: " + e.getMessage(), e);
    }
    return serving(filterName, keyType, bits, estimatedKeys(bits));
  }

  /**
   * The usual estimate of the keys in a filter from its set bits: {@code -m/k * ln(1 - X/m)} (exact
   * in expectation for the Guava layout, close for split-block's 8 bits per key).
   */
  private static long estimatedKeys(BloomFilterBits bits) {
    double m = bits.numBits();
    double set = Math.min(bits.bitCount(), m - 1);
    return Math.round(-m / bits.numHashFunctions() * Math.log1p(-set / m));
  }

  private static <K> LiveBloomFilter<K> serving(
      String filterName, LiveKeyType<K> keyType, BloomFilterBits bits, long keyCount) {
    FixedSnapshot source = new FixedSnapshot(filterName, bits, keyCount);
    ReaderCounters counters = new ReaderCounters();
    counters.attach(source);
    counters.onUpdate(NO_VERSION, source.serving().version(), Duration.ZERO);
    LocalAdds<K> localAdds =
        new LocalAdds<>(
            keyType,
            BloomFilterWatcher.DEFAULT_LOCAL_ADDS_MAX_ENTRIES,
            BloomFilterWatcher.DEFAULT_LOCAL_ADDS_TTL,
            BloomFilterWatcher.DEFAULT_LOCAL_ADDS_MAX_KEY_LENGTH,
            System::nanoTime);
    return new LiveBloomFilter<>(
        "", filterName, keyType, BeforeFirstSnapshot.FAIL_CLOSED, source, counters, localAdds);
  }

  /**
   * False means {@code key} is definitely not in the served snapshot; true means it probably is.
   * Before the first snapshot: true under {@link BeforeFirstSnapshot#FAIL_OPEN}, false under {@link
   * BeforeFirstSnapshot#FAIL_CLOSED}. A key {@linkplain #addLocal added locally} is answered true
   * until a served version does so itself. Never blocks and never fails for reasons outside the
   * process: the API server is not involved.
   *
   * @throws NullPointerException if key is null
   */
  public boolean mightContain(K key) {
    Objects.requireNonNull(key, "key");
    lookups.increment();
    ServedSnapshot snapshot =
        loop.serving(); // one volatile read: the whole lookup uses this version
    boolean answer =
        snapshot == null ? answerBeforeFirstSnapshot : keyType.mightContain(snapshot.bits(), key);
    if (!answer && overlay != null) {
      answer = addedLocally(key, snapshot);
    }
    if (answer) {
      maybePresent.increment();
    }
    return answer;
  }

  /**
   * The answer for a key {@code answeredBy} (null: before the first snapshot) said is absent: true
   * if it is held as a local add. A key leaves the overlay only after a version answering "maybe
   * present" for it was installed; a lookup that read its snapshot before that swap and the overlay
   * after the drop therefore asks the snapshot served now, so it never answers "absent" for a key
   * that was added and has not expired.
   */
  private boolean addedLocally(K key, ServedSnapshot answeredBy) {
    if (overlay.mightHold(key)) {
      return true;
    }
    ServedSnapshot now = loop.serving();
    return now != answeredBy && now != null && keyType.mightContain(now.bits(), key);
  }

  /**
   * The batch form of the second half of {@link #addedLocally}: after the overlay was read for all
   * keys, keys still answered "absent" are asked again of a version swapped in since {@code
   * answeredBy} (one read of the served snapshot for the whole batch).
   */
  private void lookUpAgainIfSwapped(
      K[] keys, int from, int count, boolean[] results, ServedSnapshot answeredBy) {
    ServedSnapshot now = loop.serving();
    if (now == answeredBy || now == null) {
      return;
    }
    for (int i = 0; i < count; i++) {
      results[i] = results[i] || keyType.mightContain(now.bits(), keys[from + i]);
    }
  }

  /**
   * Makes this filter answer "maybe present" for {@code key} at once, before any published version
   * holds it: for the pod that created an ID and will likely serve the next request for it. Other
   * pods are not told; they learn of the key with the version that holds it.
   *
   * <p>The key is held in an overlay next to the served snapshot, which lookups consult only when
   * the served bits answer "absent". It is dropped, on the watcher thread after a swap (never on
   * the lookup path), as soon as a served version answers "maybe present" for it ({@link
   * #localAddsArrived()}); also when that answer is one of the version's false positives, so at the
   * filter's false-positive rate a key may leave before the version that really holds it, and is
   * then answered from the versions served. A key no version shows within the TTL (default {@link
   * BloomFilterWatcher#DEFAULT_LOCAL_ADDS_TTL}, plus up to a tenth of it until the next sweep) is
   * dropped and counted in {@link #localAddsExpired()}: a rising count means IDs created here do
   * not reach the published filter (a broken source or a stopped operator). Adding a held key again
   * restarts its TTL. Once {@link #close() closed}, nothing is dropped any more.
   *
   * <p><b>Bounds.</b> At most {@link BloomFilterWatcher#DEFAULT_LOCAL_ADDS_MAX_ENTRIES} keys are
   * held (see {@link BloomFilterWatcher.Builder#localAdds}). When that many are held, the add is
   * refused (false, counted in {@link #localAddsRefused()}) rather than evicting a key that may not
   * have arrived yet, which would bring back the false negative this method exists to prevent.
   * String keys longer than {@link BloomFilterWatcher.Builder#localAddsMaxKeyLength} chars (default
   * {@value BloomFilterWatcher#DEFAULT_LOCAL_ADDS_MAX_KEY_LENGTH}) are refused with an exception.
   * An entry costs about 130 bytes with a 36-character UUID and 85 with a Long (the overlay holds
   * the key object itself), so 100,000 held UUIDs take about 13 MB; at most about {@code maxEntries
   * * (110 + 2 * maxKeyLength)} bytes.
   *
   * <p>Thread-safe and lock-free: any number of threads may add while others look up. Only lookups
   * the served bits answer "absent" look further: while nothing is held, at one volatile read;
   * otherwise at one bit of a small presence bitset, and only keys whose bit is set (the held ones,
   * and at most about one in eight others when the overlay is full) at a table of the held keys'
   * 64-bit fingerprints (XXH64), never decoding, copying or boxing the key. A key not held whose
   * fingerprint equals a held key's is answered "maybe present" (at most {@code held / 2^64} per
   * lookup, a false positive); a held key is never answered "absent". A lookup of a held key that
   * the served bits answer "absent" for is counted as a "maybe present" answer ({@link
   * #maybePresent()}); {@link #recordOutcome} ignores it (the bits did not answer).
   *
   * @return true if the key is held (or was already), false if refused because the bound is reached
   *     or local adds are off ({@code localAdds(0, ...)})
   * @throws NullPointerException if key is null
   * @throws IllegalArgumentException if a String key is longer than the key-length bound, or the
   *     key is not of this filter's key type (which the compiler only misses for raw types)
   */
  public boolean addLocal(K key) {
    return localAdds.add(key);
  }

  /**
   * {@link #addLocal(Object)} for each key, in order. All keys are checked first, so a null, too
   * long or mistyped key throws before any is added.
   *
   * @return how many keys were accepted; the others were refused because the bound was reached
   * @throws NullPointerException if {@code keys} or a key is null
   * @throws IllegalArgumentException as {@link #addLocal(Object)}
   */
  public int addLocal(Collection<? extends K> keys) {
    for (K key : keys) {
      localAdds.checkKey(key);
    }
    int accepted = 0;
    for (K key : keys) {
      accepted += localAdds.add(key) ? 1 : 0;
    }
    return accepted;
  }

  /** Keys {@linkplain #addLocal added locally} that are held now (no served version shows them). */
  public int localAdds() {
    return localAdds.size();
  }

  /** Local adds refused so far because the bound was reached (or local adds are off). */
  public long localAddsRefused() {
    return localAdds.refused();
  }

  /**
   * Keys added locally and dropped so far because their TTL passed before any served version showed
   * them: each is an ID this pod created that did not reach the published filter in time.
   */
  public long localAddsExpired() {
    return localAdds.expired();
  }

  /** Keys added locally and dropped so far because a served version showed them. */
  public long localAddsArrived() {
    return localAdds.arrived();
  }

  /**
   * Looks up {@code keys[from, from + count)} in one go, the answer for {@code keys[from + i]} into
   * {@code results[i]}: each answer is the one {@link #mightContain} would give, all from the same
   * served version. Hashes several keys before probing any of them, so the memory accesses of
   * neighbouring keys overlap; on a filter larger than the CPU caches, and above all in the {@code
   * SplitBlock} format, this answers more keys per second than one call per key. String keys cost
   * no allocation; Long keys are unboxed through a bounded scratch array (use {@link
   * #mightContainAllLongs} to avoid both). Keys {@linkplain #addLocal added locally} are answered
   * true as by {@link #mightContain}; should a swap drop one of them from the overlay during the
   * call, the keys answered "absent" are asked again of the new version.
   *
   * @return how many of the keys might be present (answered true)
   * @throws NullPointerException if {@code keys}, {@code results} or one of the keys is null
   * @throws IndexOutOfBoundsException if the range is outside {@code keys}, or {@code results} is
   *     shorter than {@code count}
   */
  public int mightContainAll(K[] keys, int from, int count, boolean[] results) {
    Objects.checkFromIndexSize(from, count, keys.length);
    Objects.checkFromIndexSize(0, count, results.length);
    for (int i = from; i < from + count; i++) {
      Objects.requireNonNull(keys[i], "key");
    }
    ServedSnapshot snapshot = loop.serving(); // one volatile read: the whole batch uses it
    if (snapshot == null) {
      java.util.Arrays.fill(results, 0, count, answerBeforeFirstSnapshot);
    } else {
      keyType.mightContainAll(snapshot.bits(), keys, from, count, results);
    }
    if (overlay != null) {
      for (int i = 0; i < count; i++) {
        results[i] = results[i] || overlay.mightHold(keys[from + i]);
      }
      lookUpAgainIfSwapped(keys, from, count, results, snapshot);
    }
    return countAnswers(count, results);
  }

  /**
   * {@link #mightContainAll} for a filter of {@link LiveKeyType#LONG} keys given as primitives:
   * allocates nothing, also while keys {@linkplain #addLocal added locally} are held (they are
   * looked up by fingerprint).
   *
   * @return how many of the keys might be present (answered true)
   * @throws IllegalStateException if this filter's keys are not {@link LiveKeyType#LONG}
   * @throws IndexOutOfBoundsException as {@link #mightContainAll}
   */
  public int mightContainAllLongs(long[] keys, int from, int count, boolean[] results) {
    if (keyType != LiveKeyType.LONG) {
      throw new IllegalStateException("this filter holds " + keyType + " keys, not Long keys");
    }
    Objects.checkFromIndexSize(from, count, keys.length);
    Objects.checkFromIndexSize(0, count, results.length);
    ServedSnapshot snapshot = loop.serving();
    if (snapshot == null) {
      java.util.Arrays.fill(results, 0, count, answerBeforeFirstSnapshot);
    } else {
      snapshot.bits().mightContainLongs(keys, from, count, results);
    }
    if (overlay != null) {
      @SuppressWarnings("unchecked") // checked above: K is Long
      LocalAdds<Long> longs = (LocalAdds<Long>) overlay;
      for (int i = 0; i < count; i++) {
        results[i] = results[i] || longs.mightHoldLong(keys[from + i]);
      }
      ServedSnapshot now = loop.serving();
      if (now != snapshot && now != null) { // as in lookUpAgainIfSwapped
        for (int i = 0; i < count; i++) {
          results[i] = results[i] || now.bits().mightContainLong(keys[from + i]);
        }
      }
    }
    return countAnswers(count, results);
  }

  /**
   * {@link #mightContain} for a String key given as its UTF-8 encoding {@code utf8[offset, offset +
   * length)}, for callers that hold keys as bytes (a request body, a network buffer): the bytes are
   * hashed as they are, without decoding or copying them, and the answer is the one {@code
   * mightContain} gives for the decoded String. The bytes must be valid UTF-8 (other bytes are
   * answered for exactly those bytes, as a Guava or Parquet filter hashing them would). Allocates
   * nothing, also while keys {@linkplain #addLocal added locally} are held: they are looked up by
   * the fingerprint of the bytes, not by a decoded String.
   *
   * @throws IllegalStateException if this filter's keys are not {@link LiveKeyType#STRING}
   * @throws NullPointerException if {@code utf8} is null
   * @throws IndexOutOfBoundsException if the range is outside {@code utf8}
   */
  public boolean mightContainUtf8(byte[] utf8, int offset, int length) {
    requireStringKeys();
    Objects.checkFromIndexSize(offset, length, utf8.length);
    lookups.increment();
    ServedSnapshot snapshot = loop.serving(); // one volatile read: the whole lookup uses it
    boolean answer =
        snapshot == null
            ? answerBeforeFirstSnapshot
            : snapshot.bits().mightContainUtf8(utf8, offset, length);
    if (!answer && overlay != null) {
      answer = overlay.mightHoldUtf8(utf8, offset, length);
      if (!answer) {
        // As addedLocally: a key dropped from the overlay is in the version that made it redundant.
        ServedSnapshot now = loop.serving();
        answer =
            now != snapshot && now != null && now.bits().mightContainUtf8(utf8, offset, length);
      }
    }
    if (answer) {
      maybePresent.increment();
    }
    return answer;
  }

  /**
   * {@link #mightContainUtf8(byte[], int, int)} for the bytes of {@code utf8} from its position to
   * its limit, heap or direct, read-only or not: read by absolute index, so the buffer's position,
   * limit, mark and byte order are left as they were.
   *
   * @throws IllegalStateException if this filter's keys are not {@link LiveKeyType#STRING}
   * @throws NullPointerException if {@code utf8} is null
   */
  public boolean mightContainUtf8(ByteBuffer utf8) {
    requireStringKeys();
    int offset = utf8.position();
    int length = utf8.limit() - offset;
    lookups.increment();
    ServedSnapshot snapshot = loop.serving();
    boolean answer =
        snapshot == null ? answerBeforeFirstSnapshot : snapshot.bits().mightContainUtf8(utf8);
    if (!answer && overlay != null) {
      answer = overlay.mightHoldUtf8(utf8, offset, length);
      if (!answer) {
        ServedSnapshot now = loop.serving();
        answer = now != snapshot && now != null && now.bits().mightContainUtf8(utf8);
      }
    }
    if (answer) {
      maybePresent.increment();
    }
    return answer;
  }

  /**
   * {@link #mightContain} for a String key held in any {@link CharSequence} (a {@link
   * StringBuilder} or {@link java.nio.CharBuffer} a parser reuses, say): the answer {@code
   * mightContain(key.toString())} gives. An ASCII sequence is hashed from its chars, without a copy
   * and without allocating, also when {@linkplain #addLocal local adds} are held (looked up by
   * fingerprint); any other is converted to a String first. The sequence must not change during the
   * call.
   *
   * @throws IllegalStateException if this filter's keys are not {@link LiveKeyType#STRING}
   * @throws NullPointerException if key is null
   */
  public boolean mightContainChars(CharSequence key) {
    requireStringKeys();
    Objects.requireNonNull(key, "key");
    lookups.increment();
    ServedSnapshot snapshot = loop.serving();
    boolean answer =
        snapshot == null ? answerBeforeFirstSnapshot : snapshot.bits().mightContainChars(key);
    if (!answer && overlay != null) {
      answer = overlay.mightHoldChars(key);
      if (!answer) {
        ServedSnapshot now = loop.serving();
        answer = now != snapshot && now != null && now.bits().mightContainChars(key);
      }
    }
    if (answer) {
      maybePresent.increment();
    }
    return answer;
  }

  /**
   * The batch form of {@link #mightContainUtf8(byte[], int, int)}, as {@link #mightContainAll} is
   * of {@link #mightContain}: key {@code i} (for {@code 0 <= i < count}) is {@code
   * data[offsets[from + i], offsets[from + i] + lengths[from + i])}, its answer goes into {@code
   * results[i]}, and all answers come from the same served version (one volatile read for the
   * batch). Hashes a group of keys before probing any of them, so their cache misses overlap. Every
   * range is checked before any answer is written. Allocates nothing, as {@link
   * #mightContainUtf8(byte[], int, int)}.
   *
   * @return how many of the keys might be present (answered true)
   * @throws IllegalStateException if this filter's keys are not {@link LiveKeyType#STRING}
   * @throws NullPointerException if an array is null
   * @throws IndexOutOfBoundsException if {@code [from, from + count)} is outside {@code offsets} or
   *     {@code lengths}, a key's range is outside {@code data}, or {@code results} is shorter than
   *     {@code count}
   */
  public int mightContainAllUtf8(
      byte[] data, int[] offsets, int[] lengths, int from, int count, boolean[] results) {
    requireStringKeys();
    Objects.checkFromIndexSize(from, count, offsets.length);
    Objects.checkFromIndexSize(from, count, lengths.length);
    Objects.checkFromIndexSize(0, count, results.length);
    for (int i = from; i < from + count; i++) {
      Objects.checkFromIndexSize(offsets[i], lengths[i], data.length);
    }
    ServedSnapshot snapshot = loop.serving(); // one volatile read: the whole batch uses it
    if (snapshot == null) {
      java.util.Arrays.fill(results, 0, count, answerBeforeFirstSnapshot);
    } else {
      snapshot.bits().mightContainUtf8s(data, offsets, lengths, from, count, results);
    }
    if (overlay != null) {
      for (int i = 0; i < count; i++) {
        results[i] =
            results[i] || overlay.mightHoldUtf8(data, offsets[from + i], lengths[from + i]);
      }
      ServedSnapshot now = loop.serving();
      if (now != snapshot && now != null) { // as in lookUpAgainIfSwapped
        for (int i = 0; i < count; i++) {
          results[i] =
              results[i] || now.bits().mightContainUtf8(data, offsets[from + i], lengths[from + i]);
        }
      }
    }
    return countAnswers(count, results);
  }

  private void requireStringKeys() {
    if (keyType != LiveKeyType.STRING) {
      throw new IllegalStateException("this filter holds " + keyType + " keys, not String keys");
    }
  }

  /** Counts a batch's lookups and maybe-present answers as single lookups would be. */
  private int countAnswers(int count, boolean[] results) {
    int present = 0;
    for (int i = 0; i < count; i++) {
      present += results[i] ? 1 : 0;
    }
    lookups.add(count);
    maybePresent.add(present);
    return present;
  }

  /**
   * Reports what the store said about a key this filter answered "maybe present" for: {@code found}
   * true if the store had it (a true positive), false if not (a false positive). Feeds {@link
   * #observedFalsePositives()}; see {@link FalsePositiveObservation} for the estimator and what to
   * report (all maybe-present answers whose outcome is known, or a sample chosen without looking at
   * the outcome; once per lookup).
   *
   * <p>Counted only if the served version answers "maybe present" for {@code key}: an outcome for
   * an answer given by an earlier version, or before the first snapshot, is dropped, as is one
   * racing a swap. Lock-free and cheap (one lookup and two counter increments); never throws but
   * for a null key.
   *
   * @throws NullPointerException if key is null
   */
  public void recordOutcome(K key, boolean found) {
    Objects.requireNonNull(key, "key");
    ServedSnapshot snapshot = loop.serving();
    if (snapshot != null && keyType.mightContain(snapshot.bits(), key)) {
      counters.recordOutcome(snapshot, found);
    }
  }

  /**
   * The counts reported for the served version since it was swapped in, and the false-positive rate
   * estimated from them ({@link FalsePositiveObservation#rate()}; compare with the manifest's
   * {@link ManifestView#expectedFpp()}).
   */
  public FalsePositiveObservation observedFalsePositives() {
    return counters.observation();
  }

  /** Whether a verified snapshot is being served (for readiness probes). */
  public boolean isReady() {
    return loop.serving() != null;
  }

  /**
   * Waits until a verified snapshot is served or the timeout passes.
   *
   * @return whether the filter is ready; false on timeout or if the calling thread is interrupted
   *     (its interrupt flag is then set again)
   */
  public boolean awaitReady(Duration timeout) {
    try {
      return loop.awaitReady(timeout);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return isReady();
    }
  }

  /** Version of the served snapshot, or {@link #NO_VERSION} before the first one. */
  public long currentVersion() {
    ServedSnapshot snapshot = loop.serving();
    return snapshot == null ? NO_VERSION : snapshot.version();
  }

  /**
   * Manifest of the served snapshot (key count, expected fpp, creation time...), empty before the
   * first.
   */
  public Optional<ManifestView> currentManifest() {
    ServedSnapshot snapshot = loop.serving();
    return snapshot == null ? Optional.empty() : Optional.of(ManifestView.of(snapshot.manifest()));
  }

  /** Snapshots swapped in so far (including one read from the local snapshot directory). */
  public long loads() {
    return loop.loads();
  }

  /**
   * Versions so far that were not swapped in but applied to the served bits in place: deltas of the
   * stable chain that only turn bits on, as a change stream publishes every second or two. Each is
   * also counted in {@link #loads()}, and for everything else (version, manifest, listeners,
   * metrics) it is a new version like a swapped one. Its chunks' digests (and, with trusted keys,
   * the manifest's signature) are checked before a bit is set; the whole payload's SHA-256 is
   * checked on a copy at a bounded rate ({@link BloomFilterWatcher.Builder#inPlaceDeltas}).
   */
  public long deltasAppliedInPlace() {
    return loop.deltasInPlace();
  }

  /**
   * Checks so far that found the payload of bits changed in place not to be the one its manifest
   * describes; each reloaded the version from scratch (its base and every delta, verified whole)
   * and is also counted as a failed load of reason {@code VERIFICATION}. Anything above zero means
   * memory or a writer that cannot be trusted.
   */
  public long inPlaceDigestMismatches() {
    return loop.inPlaceMismatches();
  }

  /** Failed load attempts so far (each retry that fails counts). */
  public long failures() {
    return loop.failures();
  }

  /** {@link #mightContain} calls so far. */
  public long lookups() {
    return lookups.sum();
  }

  /** {@link #mightContain} calls so far that answered true ("maybe present"). */
  public long maybePresent() {
    return maybePresent.sum();
  }

  /** Outcomes counted by {@link #recordOutcome} so far with {@code found} true, all versions. */
  public long truePositives() {
    return counters.truePositives();
  }

  /** Outcomes counted by {@link #recordOutcome} so far with {@code found} false, all versions. */
  public long falsePositives() {
    return counters.falsePositives();
  }

  /** Failed load attempts so far for {@code reason} (they add up to {@link #failures()}). */
  public long failures(LoadFailureReason reason) {
    return counters.failures(Objects.requireNonNull(reason, "reason"));
  }

  /** The most recent failed load, if any (also when a later load succeeded). */
  public Optional<LoadFailure> lastFailure() {
    return Optional.ofNullable(counters.lastFailure());
  }

  /**
   * Time since the served snapshot was built (its manifest's {@code createdAt}), zero if that lies
   * in the future (clock skew); empty before the first snapshot.
   */
  public Optional<Duration> snapshotAge() {
    return currentManifest()
        .map(
            manifest -> {
              Duration age = Duration.between(manifest.created(), Instant.now());
              return age.isNegative() ? Duration.ZERO : age;
            });
  }

  /** The snapshot served now, or null: for tests of this package. */
  ServedSnapshot servedSnapshot() {
    return loop.serving();
  }

  /** What lookups answer before the first snapshot. */
  public BeforeFirstSnapshot beforeFirstSnapshot() {
    return beforeFirstSnapshot;
  }

  /** Namespace of the BloomFilter resource. */
  public String namespace() {
    return namespace;
  }

  /** Name of the BloomFilter resource. */
  public String filterName() {
    return filterName;
  }

  /** The key type this filter serves; snapshots of another type are refused. */
  public LiveKeyType<K> keyType() {
    return keyType;
  }

  /**
   * Stops watching (waiting for a load in progress). Lookups keep answering from the last snapshot.
   * Idempotent; may be called from a listener.
   */
  @Override
  public void close() {
    loop.close();
  }

  @Override
  public String toString() {
    return "LiveBloomFilter{"
        + namespace
        + "/"
        + filterName
        + ", keyType="
        + keyType
        + ", version="
        + currentVersion()
        + "}";
  }
}
