package io.bloomoperator.assemble;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyInserter;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.source.KeySource;
import io.bloomoperator.source.LineParser;
import io.bloomoperator.source.SourceException;
import java.time.Duration;
import java.util.Locale;

/**
 * Streams a source into a Bloom filter sized so that it never saturates: the expected
 * false-positive rate at the actual key count stays at or below the target.
 *
 * <p>Without {@code expectedInsertions} the source is read twice (count, then build); with it, a
 * second read happens only when the source turns out to hold more keys than declared. Either way
 * memory is one bit array, never the key list.
 */
public final class FilterBuilder {

  /**
   * What a build produced.
   *
   * @param probableDuplicates keys whose bits were all set already when inserted: duplicates, plus
   *     the few false positives at insertion time (exact counting would need the key set)
   */
  public record Result(
      BloomFilterBits bits,
      long keys,
      long malformed,
      long nulls,
      long probableDuplicates,
      Duration took) {}

  /** Told how far a build has got, every {@link #PROGRESS_EVERY} keys. */
  @FunctionalInterface
  public interface Progress {
    void keysRead(long keys);
  }

  public static final long PROGRESS_EVERY = 1L << 20;

  /**
   * Admission of a build's bit array. {@link #reserve} runs once per build, on the build's thread,
   * right before the first array is allocated: when the source has delivered its first key (or has
   * ended without any), never while it is still connecting, querying or waiting for a first byte. A
   * source that stalls before it answers therefore holds no reservation.
   */
  @FunctionalInterface
  public interface Reservation {
    /** Blocks until the build may allocate its bit array. */
    void reserve() throws InterruptedException;
  }

  private static final Reservation UNLIMITED = () -> {};

  /**
   * Something kept per bit beside the filter that must see every key the filter gets (a counting
   * shadow for stream deletions).
   */
  @FunctionalInterface
  public interface Beside {
    /**
     * Called once the build's bit array is allocated (again if the build fills a larger one): what
     * wraps each inserter of {@code bits}, seeing every key, or null to build without. The wrapped
     * inserters must set exactly the bits they are given. {@code keys}: the keys the build expects
     * (counted, or declared); a build that reads more fills a larger array.
     */
    java.util.function.UnaryOperator<KeyInserter> open(BloomFilterBits.Builder bits, long keys);
  }

  private final Progress progress;
  private final BuildWorkers workers;
  private final Beside beside;

  /** A builder on one thread that reports no progress. */
  public FilterBuilder() {
    this(keys -> {});
  }

  /** A builder on one thread. */
  public FilterBuilder(Progress progress) {
    this(progress, BuildWorkers.singleThreaded());
  }

  /**
   * A builder that hashes and inserts on {@link BuildWorkers#threadsPerBuild()} threads; the result
   * is the same as on one thread.
   */
  public FilterBuilder(Progress progress, BuildWorkers workers) {
    this(progress, workers, null);
  }

  private FilterBuilder(Progress progress, BuildWorkers workers, Beside beside) {
    this.progress = progress;
    this.workers = workers;
    this.beside = beside;
  }

  /** This builder, with every key also given to what {@code beside} opens (null: nothing). */
  public FilterBuilder with(Beside beside) {
    return new FilterBuilder(progress, workers, beside);
  }

  /**
   * What to build.
   *
   * @param maxPayloadBytes largest serialized filter allowed; checked before allocating
   * @param format the bit layout to build
   * @param powerOfTwoBlocks split-block only: round the block count up to a power of two (at most
   *     2^22 blocks, 128 MiB) for readers that accept nothing else
   * @param published the geometry (bits, hash functions) of the published version in {@code
   *     format}, or null: kept while it still holds the keys at the target rate and is at most
   *     {@link #MAX_OVERSIZE} times the bits they need, so that a key count (or {@code
   *     expectedInsertions}) that moves a little does not make every publish a whole new snapshot;
   *     outgrown, the filter is resized with {@link #GROWTH_HEADROOM_PERCENT} headroom
   */
  public record Request(
      KeyType keyType,
      double falsePositiveRate,
      Long expectedInsertions,
      long maxMalformed,
      long maxPayloadBytes,
      BloomFilterSizing published,
      FilterFormat format,
      boolean powerOfTwoBlocks) {

    /** A request in {@code format}, sized to fit. */
    public Request(
        KeyType keyType,
        double falsePositiveRate,
        Long expectedInsertions,
        long maxMalformed,
        long maxPayloadBytes,
        BloomFilterSizing published,
        FilterFormat format) {
      this(
          keyType,
          falsePositiveRate,
          expectedInsertions,
          maxMalformed,
          maxPayloadBytes,
          published,
          format,
          false);
    }

    /** A request in the Guava layout. */
    public Request(
        KeyType keyType,
        double falsePositiveRate,
        Long expectedInsertions,
        long maxMalformed,
        long maxPayloadBytes,
        BloomFilterSizing published) {
      this(
          keyType,
          falsePositiveRate,
          expectedInsertions,
          maxMalformed,
          maxPayloadBytes,
          published,
          FilterFormat.GUAVA);
    }

    /** A request in the Guava layout with no published version to keep the size of. */
    public Request(
        KeyType keyType,
        double falsePositiveRate,
        Long expectedInsertions,
        long maxMalformed,
        long maxPayloadBytes) {
      this(keyType, falsePositiveRate, expectedInsertions, maxMalformed, maxPayloadBytes, null);
    }
  }

  /** A published geometry is kept while it is at most this many times the bits the keys need. */
  public static final int MAX_OVERSIZE = 2;

  /** Extra capacity when a published filter is outgrown, so that growth resizes it rarely. */
  public static final int GROWTH_HEADROOM_PERCENT = 25;

  /**
   * Builds the filter.
   *
   * @throws SourceException when the source cannot be read or holds too many malformed keys
   * @throws FilterTooLargeException when the filter would exceed the size limit or Guava's format
   */
  public Result build(KeySource source, Request request)
      throws SourceException, FilterTooLargeException {
    try {
      return build(source, request, UNLIMITED);
    } catch (InterruptedException e) {
      throw new IllegalStateException("an unlimited reservation does not wait", e);
    }
  }

  /**
   * Builds the filter, allocating its bit array only once {@code reservation} admits it. Counting
   * the keys needs no array and runs before.
   *
   * @throws InterruptedException while waiting for the reservation
   * @throws SourceException when the source cannot be read or holds too many malformed keys
   * @throws FilterTooLargeException when the filter would exceed the size limit or Guava's format
   */
  public Result build(KeySource source, Request request, Reservation reservation)
      throws SourceException, FilterTooLargeException, InterruptedException {
    long started = System.nanoTime();
    long capacity;
    if (request.expectedInsertions() == null) {
      capacity = count(source, request);
    } else {
      capacity = request.expectedInsertions();
    }
    Reservation once = new Once(reservation);
    Result result = fill(source, request, capacity, started, once);
    if (result.keys() > capacity) {
      // More keys than declared: a filter sized for fewer would exceed the target rate. Drop the
      // first array before allocating the larger one (under the same reservation).
      long keys = result.keys();
      result = null;
      result = fill(source, request, keys, started, once);
    }
    return result;
  }

  /** A reservation asked for at most once per build. */
  private static final class Once implements Reservation {
    private final Reservation delegate;
    private boolean reserved;

    Once(Reservation delegate) {
      this.delegate = delegate;
    }

    @Override
    public void reserve() throws InterruptedException {
      if (!reserved) {
        delegate.reserve();
        reserved = true;
      }
    }
  }

  private long count(KeySource source, Request request) throws SourceException {
    LineParser counter =
        new LineParser(
            request.keyType(),
            new LineParser.KeyConsumer() {
              @Override
              public void putString(String key) {}

              @Override
              public void putLong(long key) {}

              @Override
              public void putUtf8(byte[] utf8, int offset, int length) {}
            },
            request.maxMalformed());
    source.readKeys(counter);
    return counter.keys();
  }

  private Result fill(
      KeySource source, Request request, long capacity, long started, Reservation reservation)
      throws SourceException, FilterTooLargeException, InterruptedException {
    // An empty source still yields a valid filter (everything is absent); size it for one key.
    BloomFilterSizing sizing;
    try {
      sizing = geometry(request, Math.max(1, capacity));
    } catch (IllegalArgumentException e) {
      throw new FilterTooLargeException(e.getMessage());
    }
    long payload = request.format().payloadBytes(sizing.numBits());
    if (payload > request.maxPayloadBytes()) {
      throw new FilterTooLargeException(
          String.format(
              Locale.ROOT,
              "%d keys at false-positive rate %s need a %,d-byte snapshot, more than the limit of "
                  + "%,d bytes",
              capacity,
              request.falsePositiveRate(),
              payload,
              request.maxPayloadBytes()));
    }
    // Allocated at the first key, once the reservation admits it: until the source answers, this
    // build holds neither memory nor a reservation that others wait for.
    BloomFilterBits.Builder[] bits = {null};
    ParallelFill.Target target =
        () -> {
          bits[0] = allocate(request, sizing, reservation);
          java.util.function.UnaryOperator<KeyInserter> wrap =
              beside == null ? null : beside.open(bits[0], Math.max(1, capacity));
          return wrap == null ? insertersFor(bits[0]) : insertersFor(bits[0], wrap);
        };
    try (ParallelFill fill =
        new ParallelFill(request.keyType(), request.maxMalformed(), target, workers, progress)) {
      try {
        source.readKeys(fill);
        fill.finish();
      } catch (SourceException e) {
        throw fill.settle(e);
      } catch (ParallelFill.Interrupted e) {
        throw (InterruptedException) e.getCause();
      }
      if (!fill.opened()) {
        target.open(); // the source held no key
      }
      fill.close(); // every helper's inserts happen-before build()
      LineParser parser = fill.parser();
      return new Result(
          bits[0].build(),
          parser.keys(),
          parser.malformed(),
          parser.nulls(),
          fill.unchanged(),
          Duration.ofNanos(System.nanoTime() - started));
    }
  }

  /**
   * How keys go into the filter. Split-block: hashes go to the owner of their block range, plain
   * writes on any number of threads (on one, the buffered hashes let its cache misses overlap).
   * Guava layout, whose bits land anywhere: straight into the builder while one thread inserts, its
   * atomic view once helpers or a source's reading threads ({@link
   * io.bloomoperator.source.KeyLanes}) insert too, even in a build of one thread.
   */
  private ParallelFill.Inserters insertersFor(BloomFilterBits.Builder builder) {
    if (builder.format() == FilterFormat.SPLIT_BLOCK) {
      return ParallelFill.Inserters.partitioned(
          new BlockRangeInserts(builder, workers.threadsPerBuild()));
    }
    return new ParallelFill.Inserters(builder, builder.concurrent());
  }

  /**
   * How keys go into the filter when something beside it sees every key: through {@code wrap}ped
   * inserters, atomic ORs once other threads insert (also in the split-block layout: its
   * partitioned path hands out hashes, not keys). The bits are the same as without it (OR is
   * commutative); only the split-block build's speed differs.
   */
  private ParallelFill.Inserters insertersFor(
      BloomFilterBits.Builder builder, java.util.function.UnaryOperator<KeyInserter> wrap) {
    return new ParallelFill.Inserters(wrap.apply(builder), wrap.apply(builder.concurrent()));
  }

  /**
   * The geometry (bits, hash functions) a build of {@code keys} keys gets for {@code request}, in
   * its layout: what {@link #build} allocates, and what {@code kubectl bloom size} reports.
   *
   * @throws IllegalArgumentException if {@code keys < 1}, the rate is out of range, or the filter
   *     would exceed what the layout's format can describe
   */
  public static BloomFilterSizing geometry(Request request, long keys) {
    return request.format() == FilterFormat.SPLIT_BLOCK
        ? SplitBlockGeometry.size(request, keys)
        : size(request, keys);
  }

  /**
   * The geometry for {@code keys}: the published one while it holds them at the target rate and is
   * not grossly oversized (a new geometry means a whole new snapshot for every reader and in etcd,
   * a kept one allows a delta); otherwise what they need, with headroom when they outgrew it.
   */
  static BloomFilterSizing size(Request request, long keys) {
    double fpp = request.falsePositiveRate();
    BloomFilterSizing needed = BloomFilterSizing.forKeys(keys, fpp);
    BloomFilterSizing published = request.published();
    if (published == null) {
      return needed;
    }
    boolean holds =
        BloomFilterSizing.expectedFpp(published.numBits(), published.numHashFunctions(), keys)
            <= fpp;
    if (holds && published.numBits() <= MAX_OVERSIZE * needed.numBits()) {
      return new BloomFilterSizing(keys, fpp, published.numBits(), published.numHashFunctions());
    }
    if (!holds) {
      long withHeadroom = keys + keys / 100 * GROWTH_HEADROOM_PERCENT;
      try {
        BloomFilterSizing roomy = BloomFilterSizing.forKeys(withHeadroom, fpp);
        // Headroom never makes a filter too large that fits without it.
        if (SnapshotEncoder.HEADER_BYTES + roomy.numBits() / Byte.SIZE
            <= request.maxPayloadBytes()) {
          return roomy;
        }
      } catch (IllegalArgumentException e) {
        // the headroom would pass the format's limit; the keys alone may fit
      }
    }
    return needed;
  }

  private static BloomFilterBits.Builder allocate(
      Request request, BloomFilterSizing sizing, Reservation reservation)
      throws InterruptedException {
    reservation.reserve();
    return request.format() == FilterFormat.SPLIT_BLOCK
        ? SplitBlockGeometry.builder(request.keyType(), sizing)
        : BloomFilterBits.builder(request.keyType(), sizing);
  }
}
