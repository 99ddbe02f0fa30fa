package io.bloomoperator.changes;

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
    long maxHeldNamespaceBytes) {

  public static final int DEFAULT_MAX_TOPIC_BATCH_BYTES = 1024 * 1024 + 64;

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
        || maxHeldNamespaceBytes < 0) {
      throw new IllegalArgumentException("stream limits out of range");
    }
  }

  public static StreamLimits defaults() {
    return fromEnvironment(Map.of());
  }

  /** Reads the settings named in the record's comment; the rest are fixed. */
  public static StreamLimits fromEnvironment(Map<String, String> env) {
    return new StreamLimits(
        (int)
            EnvNumbers.positive(env, "BLOOM_STREAM_MAX_BATCH_BYTES", DEFAULT_MAX_TOPIC_BATCH_BYTES),
        512 * 1024,
        (int) EnvNumbers.positive(env, "BLOOM_STREAM_MAX_EVENT_BYTES", 64 * 1024),
        8L * 1024 * 1024,
        (int) EnvNumbers.positive(env, "BLOOM_STREAM_MAX_PARTITIONS", 256),
        Duration.ofMillis(500),
        Duration.ofSeconds(10),
        (int) EnvNumbers.positive(env, "BLOOM_STREAMS_PER_NAMESPACE", 4),
        (int) EnvNumbers.positive(env, "BLOOM_MAX_STREAMS", 64),
        java.nio.file.Path.of(
            env.getOrDefault(
                "BLOOM_STREAM_DIR",
                java.nio.file.Path.of(System.getProperty("java.io.tmpdir"), "stream-payloads")
                    .toString())),
        EnvNumbers.positiveOrZero(env, "BLOOM_STREAM_HELD_BYTES", 512L * 1024 * 1024),
        EnvNumbers.positiveOrZero(env, "BLOOM_STREAM_NAMESPACE_HELD_BYTES", 256L * 1024 * 1024));
  }
}
