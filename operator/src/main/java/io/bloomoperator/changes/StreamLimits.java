package io.bloomoperator.changes;

import io.bloomoperator.env.EnvDurations;
import io.bloomoperator.env.EnvNumbers;
import java.time.Duration;
import java.util.Map;

/**
 * The bounds every change stream is read within, the same for every tenant.
 *
 * @param maxTopicBatchBytes a topic whose {@code max.message.bytes} allows larger record batches is
 *     refused (BLOOM_STREAM_MAX_BATCH_BYTES): the broker returns a first batch whole, whatever the
 *     fetch size asks, so the topic's own limit is the only bound on one fetch
 * @param fetchBytes the fetch size asked of the broker, per fetch and per partition
 * @param maxEventBytes a record value larger than this is malformed and not parsed
 *     (BLOOM_STREAM_MAX_EVENT_BYTES)
 * @param maxReadBytes key bytes one read of a stream collects before it is published
 * @param maxPartitions a topic with more partitions is refused (BLOOM_STREAM_MAX_PARTITIONS)
 * @param maxReadTime how long one read of a stream waits for events
 * @param requestTimeout how long a call to the broker may take
 * @param streamsPerNamespace change streams open at once in one namespace
 *     (BLOOM_STREAMS_PER_NAMESPACE)
 * @param streams change streams open at once in the operator (BLOOM_MAX_STREAMS)
 * @param heldDir where the published payloads of streamed filters are kept between publishes
 *     (BLOOM_STREAM_DIR; default {@code stream-payloads} in the JVM's temporary directory, which
 *     the installs mount as an {@code emptyDir})
 * @param maxHeldBytes those payloads together at most (BLOOM_STREAM_HELD_BYTES)
 * @param maxHeldNamespaceBytes one namespace's payloads at most (BLOOM_STREAM_NAMESPACE_HELD_BYTES)
 * @param maxCallTime how long one read or position query may hold its thread, every call to the
 *     broker in it together (each call also within {@code requestTimeout})
 * @param readsPerNamespace reads of one namespace's streams under way at once
 *     (BLOOM_STREAM_READS_PER_NAMESPACE): each holds a reconcile thread shared by every namespace
 * @param readBytes heap all reads under way may hold together, from the start of a read to the end
 *     of its publish (BLOOM_STREAM_READ_BYTES); a read reserves {@link #readOverhead()} plus the
 *     keys it may collect
 * @param namespaceReadBytes of {@code readBytes}, what one namespace's reads may hold
 *     (BLOOM_STREAM_NAMESPACE_READ_BYTES)
 * @param maxBackoff longest wait between reads of a stream that keeps failing
 *     (BLOOM_STREAM_MAX_BACKOFF); the wait starts at the filter's {@code publishEvery} and doubles
 * @param maxSlotRetainedBytes write-ahead log a PostgreSQL replication slot of the operator may
 *     make the database keep (BLOOM_PG_SLOT_MAX_RETAINED_BYTES); beyond it the operator drops the
 *     slot: a slot nobody advances fills the database's disk
 * @param maxCountingBytes the counting shadows of filters with {@code deletions: Counting} together
 *     at most (BLOOM_STREAM_COUNTING_BYTES): half a byte per filter bit and 14 bytes per key of
 *     fingerprints, in files beside the held payloads ({@link CountingShadows}); while a namespace
 *     waits for room, each namespace's fair share of it ({@link CountingRoom})
 * @param maxCountingNamespaceBytes one namespace's counting shadows at most
 *     (BLOOM_STREAM_NAMESPACE_COUNTING_BYTES)
 */
public record StreamLimits(
    int maxTopicBatchBytes,
    int fetchBytes,
    int maxEventBytes,
    long maxReadBytes,
    int maxPartitions,
    Duration maxReadTime,
    Duration requestTimeout,
    int streamsPerNamespace,
    int streams,
    java.nio.file.Path heldDir,
    long maxHeldBytes,
    long maxHeldNamespaceBytes,
    Duration maxCallTime,
    int readsPerNamespace,
    long readBytes,
    long namespaceReadBytes,
    Duration maxBackoff,
    long maxSlotRetainedBytes,
    long maxCountingBytes,
    long maxCountingNamespaceBytes) {

  /** 1 GiB: hours of a busy database's log, far from a disk's size. */
  public static final long DEFAULT_MAX_SLOT_RETAINED_BYTES = 1L << 30;

  public static final int DEFAULT_MAX_TOPIC_BATCH_BYTES = 1024 * 1024 + 64;

  /** The defaults of the read bounds: a few full reads fit beside the build slots' heap. */
  public static final long DEFAULT_READ_BYTES = 24L * 1024 * 1024;

  public static final long DEFAULT_NAMESPACE_READ_BYTES = 12L * 1024 * 1024;

  public static final Duration DEFAULT_MAX_CALL_TIME = Duration.ofSeconds(3);

  public static final Duration DEFAULT_MAX_BACKOFF = Duration.ofMinutes(5);

  /**
   * 512 MiB of counting shadows: about 28M keys at a 1 % target rate (counters and fingerprints,
   * about 19 bytes a key), and like the held payloads file pages the kernel can write back.
   */
  public static final long DEFAULT_COUNTING_BYTES = 512L * 1024 * 1024;

  public static final long DEFAULT_NAMESPACE_COUNTING_BYTES = 256L * 1024 * 1024;

  public StreamLimits {
    if (maxTopicBatchBytes < 1024
        || fetchBytes < 1024
        || maxEventBytes < 16
        || maxReadBytes < maxEventBytes
        || maxPartitions < 1
        || maxPartitions > StreamPosition.MAX_PARTITIONS
        || streamsPerNamespace < 1
        || streams < streamsPerNamespace
        || heldDir == null
        || maxHeldBytes < 0
        || maxHeldNamespaceBytes < 0
        || maxCallTime == null
        || maxCallTime.compareTo(maxReadTime) <= 0
        || requestTimeout.compareTo(maxCallTime) > 0
        || readsPerNamespace < 1
        || namespaceReadBytes > readBytes
        || maxBackoff == null
        || maxBackoff.isNegative()
        || maxSlotRetainedBytes < 1
        || maxCountingBytes < 0
        || maxCountingNamespaceBytes < 0) {
      throw new IllegalArgumentException("stream limits out of range");
    }
    if (namespaceReadBytes < minReadBytes(fetchBytes, maxTopicBatchBytes, maxEventBytes)) {
      throw new IllegalArgumentException(
          "BLOOM_STREAM_NAMESPACE_READ_BYTES (and BLOOM_STREAM_READ_BYTES) must hold one read of"
              + " at least "
              + minReadBytes(fetchBytes, maxTopicBatchBytes, maxEventBytes)
              + " bytes");
    }
  }

  /** These limits with other read bounds: reads per namespace, read heap and its share. */
  public StreamLimits withReads(int readsPerNamespace, long readBytes, long namespaceReadBytes) {
    return toBuilder()
        .readsPerNamespace(readsPerNamespace)
        .readBytes(readBytes)
        .namespaceReadBytes(namespaceReadBytes)
        .build();
  }

  /** These limits with another bound on a replication slot's retained log (tests). */
  public StreamLimits withSlotRetainedBytes(long bytes) {
    return toBuilder().maxSlotRetainedBytes(bytes).build();
  }

  /** A builder starting from these limits: change some, {@link Builder#build()} checks them all. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /**
   * Limits changed one named component at a time; the one place that lists every component of the
   * record (a with-method would otherwise copy all 20). Each setter sets the record component of
   * its name; a new {@code Builder} starts from the default read bounds.
   */
  public static final class Builder {
    private int maxTopicBatchBytes;
    private int fetchBytes;
    private int maxEventBytes;
    private long maxReadBytes;
    private int maxPartitions;
    private Duration maxReadTime;
    private Duration requestTimeout;
    private int streamsPerNamespace;
    private int streams;
    private java.nio.file.Path heldDir;
    private long maxHeldBytes;
    private long maxHeldNamespaceBytes;
    private Duration maxCallTime = DEFAULT_MAX_CALL_TIME;
    private int readsPerNamespace = 2;
    private long readBytes = DEFAULT_READ_BYTES;
    private long namespaceReadBytes = DEFAULT_NAMESPACE_READ_BYTES;
    private Duration maxBackoff = DEFAULT_MAX_BACKOFF;
    private long maxSlotRetainedBytes = DEFAULT_MAX_SLOT_RETAINED_BYTES;
    private long maxCountingBytes = DEFAULT_COUNTING_BYTES;
    private long maxCountingNamespaceBytes = DEFAULT_NAMESPACE_COUNTING_BYTES;

    private Builder() {}

    private Builder(StreamLimits from) {
      maxTopicBatchBytes = from.maxTopicBatchBytes;
      fetchBytes = from.fetchBytes;
      maxEventBytes = from.maxEventBytes;
      maxReadBytes = from.maxReadBytes;
      maxPartitions = from.maxPartitions;
      maxReadTime = from.maxReadTime;
      requestTimeout = from.requestTimeout;
      streamsPerNamespace = from.streamsPerNamespace;
      streams = from.streams;
      heldDir = from.heldDir;
      maxHeldBytes = from.maxHeldBytes;
      maxHeldNamespaceBytes = from.maxHeldNamespaceBytes;
      maxCallTime = from.maxCallTime;
      readsPerNamespace = from.readsPerNamespace;
      readBytes = from.readBytes;
      namespaceReadBytes = from.namespaceReadBytes;
      maxBackoff = from.maxBackoff;
      maxSlotRetainedBytes = from.maxSlotRetainedBytes;
      maxCountingBytes = from.maxCountingBytes;
      maxCountingNamespaceBytes = from.maxCountingNamespaceBytes;
    }

    public Builder maxCountingBytes(long value) {
      maxCountingBytes = value;
      return this;
    }

    public Builder maxCountingNamespaceBytes(long value) {
      maxCountingNamespaceBytes = value;
      return this;
    }

    public Builder maxTopicBatchBytes(int value) {
      maxTopicBatchBytes = value;
      return this;
    }

    public Builder fetchBytes(int value) {
      fetchBytes = value;
      return this;
    }

    public Builder maxEventBytes(int value) {
      maxEventBytes = value;
      return this;
    }

    public Builder maxReadBytes(long value) {
      maxReadBytes = value;
      return this;
    }

    public Builder maxPartitions(int value) {
      maxPartitions = value;
      return this;
    }

    public Builder maxReadTime(Duration value) {
      maxReadTime = value;
      return this;
    }

    public Builder requestTimeout(Duration value) {
      requestTimeout = value;
      return this;
    }

    public Builder streamsPerNamespace(int value) {
      streamsPerNamespace = value;
      return this;
    }

    public Builder streams(int value) {
      streams = value;
      return this;
    }

    public Builder heldDir(java.nio.file.Path value) {
      heldDir = value;
      return this;
    }

    public Builder maxHeldBytes(long value) {
      maxHeldBytes = value;
      return this;
    }

    public Builder maxHeldNamespaceBytes(long value) {
      maxHeldNamespaceBytes = value;
      return this;
    }

    public Builder maxCallTime(Duration value) {
      maxCallTime = value;
      return this;
    }

    public Builder readsPerNamespace(int value) {
      readsPerNamespace = value;
      return this;
    }

    public Builder readBytes(long value) {
      readBytes = value;
      return this;
    }

    public Builder namespaceReadBytes(long value) {
      namespaceReadBytes = value;
      return this;
    }

    public Builder maxBackoff(Duration value) {
      maxBackoff = value;
      return this;
    }

    public Builder maxSlotRetainedBytes(long value) {
      maxSlotRetainedBytes = value;
      return this;
    }

    /**
     * The limits as set.
     *
     * @throws IllegalArgumentException for limits out of range (the record's checks)
     */
    public StreamLimits build() {
      return new StreamLimits(
          maxTopicBatchBytes,
          fetchBytes,
          maxEventBytes,
          maxReadBytes,
          maxPartitions,
          maxReadTime,
          requestTimeout,
          streamsPerNamespace,
          streams,
          heldDir,
          maxHeldBytes,
          maxHeldNamespaceBytes,
          maxCallTime,
          readsPerNamespace,
          readBytes,
          namespaceReadBytes,
          maxBackoff,
          maxSlotRetainedBytes,
          maxCountingBytes,
          maxCountingNamespaceBytes);
    }
  }

  /**
   * Heap a read may hold besides the keys it collects: the consumer's fetched records, one fetch
   * and one record batch the broker returns whole.
   */
  public long readOverhead() {
    return (long) fetchBytes + maxTopicBatchBytes;
  }

  /** The least a read reserves: its overhead and one key of the largest event. */
  public long minReadBytes() {
    return minReadBytes(fetchBytes, maxTopicBatchBytes, maxEventBytes);
  }

  /** The most a read reserves: its overhead and {@link #maxReadBytes()} of keys. */
  public long fullReadBytes() {
    return readOverhead() + maxReadBytes;
  }

  private static long minReadBytes(int fetchBytes, int maxTopicBatchBytes, int maxEventBytes) {
    return (long) fetchBytes + maxTopicBatchBytes + keyBytes(maxEventBytes);
  }

  /**
   * What a collected key of {@code chars} characters is counted as on the heap: its characters at
   * two bytes each (a key outside Latin-1) and the objects around them.
   */
  public static long keyBytes(int chars) {
    return 2L * chars + 48;
  }

  public static StreamLimits defaults() {
    return fromEnvironment(Map.of());
  }

  /** Reads the settings named in the record's comment; the rest are fixed. */
  public static StreamLimits fromEnvironment(Map<String, String> env) {
    return new Builder()
        .maxTopicBatchBytes(
            (int)
                EnvNumbers.positive(
                    env, "BLOOM_STREAM_MAX_BATCH_BYTES", DEFAULT_MAX_TOPIC_BATCH_BYTES))
        .fetchBytes(512 * 1024)
        .maxEventBytes((int) EnvNumbers.positive(env, "BLOOM_STREAM_MAX_EVENT_BYTES", 64 * 1024))
        .maxReadBytes(8L * 1024 * 1024)
        .maxPartitions((int) EnvNumbers.positive(env, "BLOOM_STREAM_MAX_PARTITIONS", 256))
        .maxReadTime(Duration.ofMillis(500))
        .requestTimeout(Duration.ofSeconds(2))
        .streamsPerNamespace((int) EnvNumbers.positive(env, "BLOOM_STREAMS_PER_NAMESPACE", 4))
        .streams((int) EnvNumbers.positive(env, "BLOOM_MAX_STREAMS", 64))
        .heldDir(
            java.nio.file.Path.of(
                env.getOrDefault(
                    "BLOOM_STREAM_DIR",
                    java.nio.file.Path.of(System.getProperty("java.io.tmpdir"), "stream-payloads")
                        .toString())))
        .maxHeldBytes(EnvNumbers.positiveOrZero(env, "BLOOM_STREAM_HELD_BYTES", 512L * 1024 * 1024))
        .maxHeldNamespaceBytes(
            EnvNumbers.positiveOrZero(env, "BLOOM_STREAM_NAMESPACE_HELD_BYTES", 256L * 1024 * 1024))
        .readsPerNamespace((int) EnvNumbers.positive(env, "BLOOM_STREAM_READS_PER_NAMESPACE", 2))
        .readBytes(EnvNumbers.positive(env, "BLOOM_STREAM_READ_BYTES", DEFAULT_READ_BYTES))
        .namespaceReadBytes(
            EnvNumbers.positive(
                env, "BLOOM_STREAM_NAMESPACE_READ_BYTES", DEFAULT_NAMESPACE_READ_BYTES))
        .maxBackoff(
            EnvDurations.positiveOrZero(env, "BLOOM_STREAM_MAX_BACKOFF", DEFAULT_MAX_BACKOFF))
        .maxSlotRetainedBytes(
            EnvNumbers.positive(
                env, "BLOOM_PG_SLOT_MAX_RETAINED_BYTES", DEFAULT_MAX_SLOT_RETAINED_BYTES))
        .maxCountingBytes(
            EnvNumbers.positiveOrZero(env, "BLOOM_STREAM_COUNTING_BYTES", DEFAULT_COUNTING_BYTES))
        .maxCountingNamespaceBytes(
            EnvNumbers.positiveOrZero(
                env, "BLOOM_STREAM_NAMESPACE_COUNTING_BYTES", DEFAULT_NAMESPACE_COUNTING_BYTES))
        .build();
  }
}
