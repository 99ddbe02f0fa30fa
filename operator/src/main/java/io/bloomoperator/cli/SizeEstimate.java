package io.bloomoperator.cli;

import io.bloomoperator.api.SnapshotSpec;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.publish.DeltaPolicy;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.PublishPlan;
import io.bloomoperator.publish.WriteBudget;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotDelta;
import io.bloomoperator.snapshot.SnapshotLimits;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SplitBlockSizing;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What one filter costs, each figure taken from the code that decides it: the builder's geometry,
 * the layout's payload size, the write budget's chunk size and etcd charge, the publish plan's
 * choice between a delta and a whole snapshot, and the reader's default size limit.
 *
 * @param input what was asked for
 * @param geometry the filter the operator builds
 * @param transport where its chunks go and what they cost
 * @param refresh what one refresh with {@code input.churn()} changed keys costs
 * @param reader what one reader pod needs
 * @param cluster {@code input.pods()} readers together
 * @param warnings limits this filter runs into beyond the ConfigMap one, as sentences
 */
record SizeEstimate(
    Input input,
    Geometry geometry,
    Transport transport,
    Refresh refresh,
    Reader reader,
    Cluster cluster,
    List<String> warnings) {

  /**
   * @param chunkSize the requested chunk size (spec.snapshot.chunkSizeBytes)
   * @param churn keys added or removed between two versions
   * @param pods reader pods
   * @param name the filter's name: chunk names, and so the manifest's size, depend on it
   */
  record Input(
      long keys,
      double fpp,
      FilterFormat format,
      KeyType keyType,
      int chunkSize,
      long churn,
      long pods,
      String name) {}

  /**
   * @param payloadBytes the snapshot's bytes (header and bit array)
   */
  record Geometry(
      long numBits,
      int numHashFunctions,
      double bitsPerKey,
      double expectedFpp,
      long payloadBytes) {}

  /**
   * @param chunkSize bytes per chunk after the write budget raised it (at most {@link
   *     WriteBudget.Limits#DEFAULT_MAX_CHUNKS_PER_VERSION} chunks a version)
   * @param fitsConfigMaps whether the payload is within the operator's default ConfigMap limit
   * @param maxConfigMapBytes that limit (BLOOM_MAX_SNAPSHOT_BYTES)
   * @param configMapEtcdBytes what publishing a whole version as ConfigMaps costs etcd: the chunks
   *     as the write budget charges them, and the manifest ConfigMap
   * @param manifestBytes the manifest's JSON
   * @param manifestEtcdBytes what the manifest ConfigMap alone costs etcd (all that an object-store
   *     version writes there)
   * @param objectStoreBytes what a whole version adds to an object store
   */
  record Transport(
      int chunkSize,
      long chunks,
      boolean fitsConfigMaps,
      long maxConfigMapBytes,
      long configMapEtcdBytes,
      long manifestBytes,
      long manifestEtcdBytes,
      long objectStoreBytes) {}

  /**
   * @param changedBitsBound at most churn × k bits differ (and never more than the filter has)
   * @param deltaBytesBound an upper bound of the encoded delta for that many changed bits
   * @param maxDeltaBytes the largest delta the default delta policy publishes
   * @param publishedAs what the operator's publish plan writes for a delta of the bound: DELTA or
   *     WHOLE (with WHOLE, a real delta below {@code maxDeltaBytes} is still published as a delta)
   * @param bytesPerReader chunk bytes each reader downloads for this refresh
   * @param configMapEtcdBytes what the refresh costs etcd as ConfigMaps
   */
  record Refresh(
      long churn,
      long changedBitsBound,
      long deltaBytesBound,
      long wholeBytes,
      long maxDeltaBytes,
      String publishedAs,
      long bytesPerReader,
      long configMapEtcdBytes) {}

  /**
   * @param filterBytes one copy of the filter's bits on the heap (a {@code long[]})
   * @param coldStartPeakBytes a first load: the words being filled and one chunk
   * @param refreshPeakBytes any later load, whole or delta: the served words, the new ones (a delta
   *     is applied to a copy) and one chunk
   * @param xmxBytes the smallest heap whose default reader limit (a quarter of it) admits the
   *     payload
   * @param containerMemoryBytes {@code xmxBytes} at -XX:MaxRAMPercentage={@value
   *     #MAX_RAM_PERCENTAGE}
   * @param mappedHeapBytes memory-mapped mode: one chunk in flight
   * @param mappedDiskBytes memory-mapped mode: the served payload file and the one being written
   * @param mappedPageCacheBytes memory-mapped mode: the served file resident for full-speed lookups
   */
  record Reader(
      long filterBytes,
      long coldStartPeakBytes,
      long refreshPeakBytes,
      long xmxBytes,
      long containerMemoryBytes,
      long mappedHeapBytes,
      long mappedDiskBytes,
      long mappedPageCacheBytes) {}

  record Cluster(long pods, long heapBytes, long bytesPerRefresh, long bytesPerColdStart) {}

  /** The JVM flag the operator's own deployment uses; the container hint assumes it. */
  static final int MAX_RAM_PERCENTAGE = 75;

  private static final String NO_DIGEST = "0".repeat(64);
  private static final long MIB = 1024 * 1024;

  /**
   * Computes every figure for {@code input}.
   *
   * @throws IllegalArgumentException when the filter cannot be built (e.g. beyond the format)
   */
  static SizeEstimate of(Input input) {
    BloomFilterSizing sizing =
        FilterBuilder.geometry(
            new FilterBuilder.Request(
                input.keyType(),
                input.fpp(),
                input.keys(),
                0,
                Long.MAX_VALUE,
                null,
                input.format()),
            input.keys());
    long payload = input.format().payloadBytes(sizing.numBits());
    Geometry geometry =
        new Geometry(
            sizing.numBits(),
            sizing.numHashFunctions(),
            (double) sizing.numBits() / input.keys(),
            expectedFpp(input.format(), sizing, input.keys()),
            payload);

    int chunkSize =
        new WriteBudget(WriteBudget.Limits.defaults())
            .chunkSize(input.chunkSize(), payload, SnapshotSpec.MAX_CHUNK_BYTES);
    long chunks = PublishPlan.chunks(payload, chunkSize);
    Manifest published = manifest(input, sizing, payload, chunkSize, chunks);
    long manifestBytes = published.toJson().length();
    long manifestEtcd = WriteBudget.Limits.cost(manifestBytes, 1);
    Instant now = Instant.now();
    PublishPlan whole = plan(null, payload, chunkSize, -1, now);
    long maxConfigMap = OperatorSettings.Snapshots.DEFAULT_MAX_BYTES;
    Transport transport =
        new Transport(
            chunkSize,
            chunks,
            payload <= maxConfigMap,
            maxConfigMap,
            whole.writeCost() + manifestEtcd,
            manifestBytes,
            manifestEtcd,
            whole.writtenBytes());

    DeltaPolicy deltas = DeltaPolicy.defaults();
    long changedBits = Math.min(sizing.numBits(), input.churn() * sizing.numHashFunctions());
    long deltaBound = deltaBytesBound(sizing.numBits(), changedBits);
    long maxDelta = deltas.maxDeltaBytes(payload);
    PublishPlan next =
        plan(published, payload, chunkSize, deltaBound <= maxDelta ? deltaBound : -1, now);
    Refresh refresh =
        new Refresh(
            input.churn(),
            changedBits,
            deltaBound,
            payload,
            maxDelta,
            next.kind().name(),
            next.writtenBytes(),
            next.writeCost() + manifestEtcd);

    long filterBytes = sizing.numBits() / Byte.SIZE;
    long refreshPeak = 2 * filterBytes + chunkSize;
    long xmx = roundUpToMiB(smallestHeapAdmitting(payload));
    Reader reader =
        new Reader(
            filterBytes,
            filterBytes + chunkSize,
            refreshPeak,
            xmx,
            roundUpToMiB(ceilDiv(xmx * 100, MAX_RAM_PERCENTAGE)),
            chunkSize,
            2 * payload,
            payload);
    Cluster cluster =
        new Cluster(
            input.pods(),
            input.pods() * refreshPeak,
            input.pods() * next.writtenBytes(),
            input.pods() * payload);
    return new SizeEstimate(
        input, geometry, transport, refresh, reader, cluster, warnings(transport));
  }

  private static List<String> warnings(Transport transport) {
    List<String> warnings = new ArrayList<>();
    if (transport.chunks() > SnapshotLimits.DEFAULT_MAX_CHUNKS) {
      warnings.add(
          String.format(
              Locale.ROOT,
              "%,d chunks: readers refuse more than %,d unless their maxChunks is raised",
              transport.chunks(),
              SnapshotLimits.DEFAULT_MAX_CHUNKS));
    }
    if (transport.manifestBytes() > SnapshotLimits.MAX_CHUNK_BYTES) {
      warnings.add(
          String.format(
              Locale.ROOT,
              "the manifest would be %,d bytes, more than a ConfigMap holds (%,d): split the key"
                  + " set or raise the fpp",
              transport.manifestBytes(),
              SnapshotLimits.MAX_CHUNK_BYTES));
    }
    return warnings;
  }

  /**
   * An upper bound of {@link SnapshotDelta}'s encoding of {@code changedBits} changed bits in a
   * filter of {@code numBits}: the header, then one varint per changed bit holding the gap to the
   * previous one. A varint of gap g takes {@code ceil(bitLength(g) / 7)} bytes (at least 1), which
   * is at most {@code 1 + log2(g + 1) / 7}; that is concave and the gaps (plus one each) add up to
   * at most numBits, so the sum is largest with equal gaps: {@code n (1 + log2(numBits / n) / 7)}.
   */
  static long deltaBytesBound(long numBits, long changedBits) {
    if (changedBits <= 0) {
      return SnapshotDelta.HEADER_BYTES;
    }
    double perBit = 1 + Math.log((double) numBits / changedBits) / Math.log(2) / 7;
    return SnapshotDelta.HEADER_BYTES + (long) Math.ceil(changedBits * perBit);
  }

  /**
   * The rate the manifest records for the layout: Guava's formula, or for split-block the rate at
   * the keys per block ({@link SplitBlockSizing#fppAt}).
   */
  private static double expectedFpp(FilterFormat format, BloomFilterSizing sizing, long keys) {
    if (format == FilterFormat.SPLIT_BLOCK) {
      long blocks = sizing.numBits() / (SplitBlockSizing.BYTES_PER_BLOCK * Byte.SIZE);
      return Math.min(1.0, SplitBlockSizing.fppAt((double) keys / blocks));
    }
    return sizing.expectedFpp();
  }

  /**
   * The manifest of a whole version 1 of this filter, with its real chunk names and sizes (digests
   * are placeholders of the same length): what etcd holds for it.
   */
  private static Manifest manifest(
      Input input, BloomFilterSizing sizing, long payload, int chunkSize, long chunks) {
    List<Manifest.ChunkRef> refs = new ArrayList<>();
    for (int i = 0; i < chunks; i++) {
      long bytes = Math.min(chunkSize, payload - (long) i * chunkSize);
      refs.add(
          new Manifest.ChunkRef(
              SnapshotNames.chunkName(input.name(), 1, i), (int) bytes, NO_DIGEST));
    }
    return new Manifest(
        input.format().manifestFormat(),
        1,
        input.name(),
        input.keyType(),
        sizing.numBits(),
        sizing.numHashFunctions(),
        input.keys(),
        expectedFpp(input.format(), sizing, input.keys()),
        payload,
        NO_DIGEST,
        DateTimeFormatter.ISO_INSTANT.format(Instant.now().truncatedTo(ChronoUnit.MILLIS)),
        refs);
  }

  /** What the operator's publish plan writes for a new version over {@code published}. */
  private static PublishPlan plan(
      Manifest published, long payload, int chunkSize, long deltaSize, Instant now) {
    // Another digest than the published one: a rebuild of the same bytes would only be confirmed.
    String sha256 = "1".repeat(64);
    try {
      return PublishPlan.plan(
          published,
          new PublishPlan.Facts(payload, sha256, chunkSize, deltaSize, null),
          DeltaPolicy.defaults(),
          PublishPlan.Budget.unlimited(),
          published == null ? 0 : published.version(),
          now);
    } catch (PublishException e) {
      throw new IllegalStateException("an unlimited budget from version 1 cannot refuse", e);
    }
  }

  /**
   * The smallest heap for which a reader's default limit ({@link SnapshotLimits#forHeap}) admits.
   */
  private static long smallestHeapAdmitting(long payload) {
    long low = 1;
    long high = Long.MAX_VALUE / 2;
    while (low < high) {
      long mid = low + (high - low) / 2;
      if (SnapshotLimits.forHeap(mid).maxTotalBytes() >= payload) {
        high = mid;
      } else {
        low = mid + 1;
      }
    }
    return low;
  }

  private static long roundUpToMiB(long bytes) {
    return ceilDiv(bytes, MIB) * MIB;
  }

  private static long ceilDiv(long a, long b) {
    return -Math.floorDiv(-a, b);
  }
}
