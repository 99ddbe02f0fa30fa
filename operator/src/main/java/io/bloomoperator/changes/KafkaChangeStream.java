package io.bloomoperator.changes;

import io.bloomoperator.api.KafkaChangesSpec;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.source.EgressPolicy;
import io.bloomoperator.source.SecretAccess;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.InvalidOffsetException;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Kafka topic read as a change stream: without a consumer group, from positions the caller gives.
 *
 * <ul>
 *   <li>No group: partitions are {@code assign()}ed and {@code seek()}ed, offsets are never
 *       committed, {@code auto.offset.reset=none}. A tenant-chosen group id could take over another
 *       application's offsets, and offsets committed ahead of a publish would lose keys; a position
 *       retention passed is reported ({@link StreamException.Kind#POSITION_LOST}), never skipped.
 *   <li>Typed configuration only: the client's properties are written here from {@link
 *       KafkaChangesSpec}'s fields and {@link StreamLimits}; nothing of the spec is passed through.
 *   <li>Egress: every connection, to the bootstrap servers and to every broker the metadata then
 *       advertises, is made inside {@link ConnectGuard#call} and judged by the egress policy.
 *   <li>Size: a topic whose {@code max.message.bytes} allows batches above {@link
 *       StreamLimits#maxTopicBatchBytes()} is refused, checked when the stream opens and each time
 *       the partitions are listed again (the broker returns a first batch whole, whatever {@code
 *       fetch.max.bytes} says); a read stops collecting at {@link StreamLimits#maxReadBytes()}.
 *   <li>Partitions are listed again every {@link #RELIST_EVERY}; a new one is read from its start.
 * </ul>
 *
 * <p>Not thread-safe: one caller at a time, as the Kafka consumer.
 */
public final class KafkaChangeStream implements ChangeStream {

  private static final Logger LOG = LoggerFactory.getLogger(KafkaChangeStream.class);

  /** What a delete event's record and time take on the heap beside its key. */
  private static final long DELETION_BYTES = 64;

  /** How often partitions (and the topic's batch limit) are looked at again. */
  static final Duration RELIST_EVERY = Duration.ofSeconds(30);

  /**
   * How long closing the clients may wait: nothing of theirs is worth waiting for (no group, no
   * commits), and a failed read closes them on its reconcile thread.
   */
  private static final Duration CLOSE_TIMEOUT = Duration.ofMillis(200);

  private final String topic;
  private final StreamLimits limits;
  private final EventFormat format;
  private final KeyType keyType;
  private final ConnectGuard.Guard guard;
  private final Properties config;
  private KafkaConsumer<byte[], byte[]> consumer;
  private Admin admin;
  private StreamPosition at;
  private Instant listedAt;
  private Duration relistEvery = RELIST_EVERY;

  /**
   * A stream of {@code spec}'s topic for a filter of {@code keyType}, without TLS or SASL; nothing
   * is connected yet.
   *
   * @param clientId names the operator's connections in the broker's logs and quotas
   * @throws StreamException of kind REFUSED when a bootstrap server is refused by {@code egress}
   */
  public KafkaChangeStream(
      KafkaChangesSpec spec,
      KeyType keyType,
      StreamLimits limits,
      EgressPolicy egress,
      String clientId)
      throws StreamException {
    this(spec, keyType, limits, egress, clientId, null);
  }

  /**
   * A stream of {@code spec}'s topic, with the TLS and SASL settings of {@code spec} and the
   * Secrets they name read through {@code secrets} ({@link KafkaSecurity}); nothing is connected
   * yet.
   *
   * @throws StreamException of kind REFUSED when a bootstrap server is refused by {@code egress},
   *     or a Secret is missing, not allowed or unusable
   */
  public KafkaChangeStream(
      KafkaChangesSpec spec,
      KeyType keyType,
      StreamLimits limits,
      EgressPolicy egress,
      String clientId,
      SecretAccess secrets)
      throws StreamException {
    this.topic = spec.getTopic();
    this.limits = limits;
    this.format = new EventFormat(spec, keyType, limits.maxEventBytes());
    this.keyType = keyType;
    this.guard = new ConnectGuard.Guard(egress);
    checkBootstrap(spec.getBootstrapServers(), egress);
    this.config = config(spec, limits, clientId);
    config.putAll(KafkaSecurity.properties(spec, secrets));
  }

  /** The client properties: every one is the operator's choice, none comes from the spec. */
  static Properties config(KafkaChangesSpec spec, StreamLimits limits, String clientId) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, String.join(",", spec.getBootstrapServers()));
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
    p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, Integer.toString(limits.fetchBytes()));
    p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, Integer.toString(limits.fetchBytes()));
    p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "10000");
    p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "200");
    // Every wait of the client is the operator's and small: a read holds a reconcile thread that
    // every namespace shares, and a broker that accepts connections and never answers must cost
    // it no more than maxCallTime (the calls are also given what is left of it).
    int timeout = (int) limits.requestTimeout().toMillis();
    p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, Integer.toString(timeout));
    p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, Integer.toString(timeout));
    p.put(ConsumerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, Integer.toString(timeout / 2));
    p.put(ConsumerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, Integer.toString(timeout));
    p.put(ConsumerConfig.RECONNECT_BACKOFF_MS_CONFIG, "200");
    p.put(ConsumerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, Integer.toString(timeout));
    p.put(ConsumerConfig.RETRY_BACKOFF_MS_CONFIG, "100");
    p.put(ConsumerConfig.RETRY_BACKOFF_MAX_MS_CONFIG, Integer.toString(timeout));
    p.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, Long.toString(RELIST_EVERY.toMillis()));
    // The client would otherwise push its metrics to the broker (KIP-714): not the tenant's data.
    p.put(ConsumerConfig.ENABLE_METRICS_PUSH_CONFIG, "false");
    return p;
  }

  private static void checkBootstrap(List<String> servers, EgressPolicy egress)
      throws StreamException {
    if (servers == null || servers.isEmpty() || servers.size() > 8) {
      throw new StreamException(
          StreamException.Kind.REFUSED, "spec.changes.kafka needs 1 to 8 bootstrap servers");
    }
    for (String server : servers) {
      String host = BootstrapServer.parse(server).host();
      Optional<EgressPolicy.Refusal> refusal = egress.checkLiteral(host);
      if (refusal.isEmpty() && EgressPolicy.literalAddress(host).isEmpty()) {
        refusal = egress.checkName(host);
      }
      if (refusal.isPresent()) {
        throw new StreamException(
            StreamException.Kind.REFUSED,
            "a bootstrap server of spec.changes.kafka "
                + refusal.get().text()
                + " (only the operator's BLOOM_HTTP_ALLOW can admit it); nothing was sent there");
      }
    }
  }

  @Override
  public StreamPosition positionAt(Instant time) throws StreamException {
    return guarded(
        deadline -> {
          List<TopicPartition> partitions = open(deadline);
          Map<TopicPartition, Long> query = new HashMap<>();
          partitions.forEach(tp -> query.put(tp, time.toEpochMilli()));
          Map<TopicPartition, OffsetAndTimestamp> found =
              consumer.offsetsForTimes(query, deadline.call());
          Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, deadline.call());
          TreeMap<Integer, Long> offsets = new TreeMap<>();
          for (TopicPartition tp : partitions) {
            OffsetAndTimestamp at = found.get(tp);
            offsets.put(tp.partition(), at != null ? at.offset() : ends.getOrDefault(tp, 0L));
          }
          return new StreamPosition(offsets);
        });
  }

  @Override
  public Batch read(StreamPosition from) throws StreamException {
    return read(from, limits.maxReadBytes());
  }

  @Override
  public Batch read(StreamPosition from, long maxKeyBytes) throws StreamException {
    long cap = Math.min(maxKeyBytes, limits.maxReadBytes());
    return guarded(
        deadline -> {
          List<TopicPartition> partitions = open(deadline);
          if (!from.equals(at)) {
            seek(partitions, from);
          }
          List<String> adds = new ArrayList<>();
          List<CountingShadow.Deletion> deleted = new ArrayList<>();
          long unorderedAdds = 0;
          long deletes = 0;
          long malformed = 0;
          long bytes = 0;
          long oldest = Long.MAX_VALUE;
          // Polling ends at maxReadTime, or sooner when connecting took most of maxCallTime.
          long pollUntil =
              System.nanoTime() + Math.min(limits.maxReadTime().toNanos(), deadline.left());
          boolean full = false;
          do {
            long left = Math.max(0, pollUntil - System.nanoTime());
            ConsumerRecords<byte[], byte[]> records =
                consumer.poll(Duration.ofNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(200))));
            for (TopicPartition tp : records.partitions()) {
              for (ConsumerRecord<byte[], byte[]> record : records.records(tp)) {
                if (full) {
                  // Past the reservation: this partition resumes here, on this read's position
                  // and the next read's.
                  consumer.seek(tp, record.offset());
                  break;
                }
                EventFormat.Event event = format.read(record.value());
                String key =
                    event instanceof EventFormat.Event.Add add
                        ? add.key()
                        : event instanceof EventFormat.Event.Delete delete ? delete.key() : null;
                // A delete's key is kept too (for a counting shadow), within the same reservation.
                long more = key == null ? 0 : StreamLimits.keyBytes(key.length()) + DELETION_BYTES;
                if (key != null && bytes + more > cap && !(adds.isEmpty() && deleted.isEmpty())) {
                  full = true;
                  consumer.seek(tp, record.offset());
                  break;
                }
                bytes += more;
                if (event instanceof EventFormat.Event.Add) {
                  adds.add(key);
                  if (!KeyedPartitions.ordered(record, key, keyType, partitions.size())) {
                    unorderedAdds++;
                  }
                } else if (event instanceof EventFormat.Event.Delete) {
                  deletes++;
                  deleted.add(
                      new CountingShadow.Deletion(
                          key,
                          tp.partition(),
                          record.offset(),
                          KeyedPartitions.ordered(record, key, keyType, partitions.size()),
                          adds.size()));
                } else {
                  malformed++;
                }
                if (record.timestamp() > 0) {
                  oldest = Math.min(oldest, record.timestamp());
                }
              }
            }
            if (records.isEmpty() && !adds.isEmpty()) {
              break; // caught up: publish what was read rather than wait for more
            }
          } while (!full && bytes < cap && System.nanoTime() < pollUntil);
          TreeMap<Integer, Long> next = new TreeMap<>();
          long lag = 0;
          for (TopicPartition tp : partitions) {
            next.put(tp.partition(), consumer.position(tp, deadline.call()));
            OptionalLong behind = consumer.currentLag(tp);
            lag = lag < 0 || behind.isEmpty() ? -1 : lag + behind.getAsLong();
          }
          at = new StreamPosition(next);
          return new Batch(
              List.copyOf(adds),
              deletes,
              List.copyOf(deleted),
              unorderedAdds,
              malformed,
              at,
              lag,
              oldest == Long.MAX_VALUE ? null : Instant.ofEpochMilli(oldest));
        });
  }

  /** Connects (once), checks the topic and lists its partitions (again every RELIST_EVERY). */
  private List<TopicPartition> open(Deadline deadline) throws StreamException {
    if (consumer == null) {
      consumer =
          new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
      Properties adminConfig = new Properties();
      for (String key : AdminClientConfig.configNames()) {
        if (config.containsKey(key)) {
          adminConfig.put(key, config.get(key));
        }
      }
      adminConfig.put(
          AdminClientConfig.CLIENT_ID_CONFIG,
          config.get(ConsumerConfig.CLIENT_ID_CONFIG) + "-admin");
      // Created inside the guarded call: its network thread inherits the guard for its whole life.
      admin = Admin.create(adminConfig);
      listedAt = null;
    }
    List<TopicPartition> assigned = new ArrayList<>(consumer.assignment());
    if (listedAt != null
        && Duration.between(listedAt, Instant.now()).compareTo(relistEvery) < 0
        && !assigned.isEmpty()) {
      return assigned;
    }
    checkBatchLimit(deadline);
    List<PartitionInfo> infos = consumer.partitionsFor(topic, deadline.call());
    if (infos == null || infos.isEmpty()) {
      throw new StreamException(
          StreamException.Kind.UNAVAILABLE, "the topic of spec.changes.kafka does not exist");
    }
    if (infos.size() > limits.maxPartitions()) {
      throw new StreamException(
          StreamException.Kind.REFUSED,
          "the topic has "
              + infos.size()
              + " partitions, more than BLOOM_STREAM_MAX_PARTITIONS ("
              + limits.maxPartitions()
              + ")");
    }
    List<TopicPartition> partitions = new ArrayList<>();
    for (PartitionInfo info : infos) {
      partitions.add(new TopicPartition(topic, info.partition()));
    }
    List<TopicPartition> added = new ArrayList<>(partitions);
    added.removeAll(assigned);
    if (!added.isEmpty()) {
      consumer.assign(partitions);
      // A partition new since the last listing has only events the position cannot have seen.
      consumer.seekToBeginning(added);
      if (at != null) {
        TreeMap<Integer, Long> offsets = new TreeMap<>(at.offsets());
        added.forEach(tp -> offsets.remove(tp.partition()));
        at = new StreamPosition(offsets);
      }
    }
    listedAt = Instant.now();
    return partitions;
  }

  private void seek(List<TopicPartition> partitions, StreamPosition from) {
    List<TopicPartition> fromStart = new ArrayList<>();
    for (TopicPartition tp : partitions) {
      long offset = from.of(tp.partition());
      if (offset < 0) {
        fromStart.add(tp);
      } else {
        consumer.seek(tp, offset);
      }
    }
    if (!fromStart.isEmpty()) {
      consumer.seekToBeginning(fromStart);
    }
    at = from;
  }

  private void checkBatchLimit(Deadline deadline) throws StreamException {
    ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
    Config config;
    try {
      config =
          admin
              .describeConfigs(List.of(resource))
              .all()
              .get(deadline.call().toMillis(), TimeUnit.MILLISECONDS)
              .get(resource);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof SecurityException refused) {
        throw refused;
      }
      if (e.getCause() instanceof AuthenticationException failed) {
        throw failed;
      }
      throw new StreamException(
          StreamException.Kind.UNAVAILABLE,
          "the topic's configuration could not be read ("
              + e.getCause().getClass().getSimpleName()
              + ")");
    } catch (java.util.concurrent.TimeoutException e) {
      throw new StreamException(
          StreamException.Kind.UNAVAILABLE,
          "the topic's configuration could not be read within " + limits.requestTimeout());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StreamException(StreamException.Kind.UNAVAILABLE, "interrupted");
    }
    ConfigEntry entry = config == null ? null : config.get("max.message.bytes");
    long batch;
    try {
      batch = entry == null || entry.value() == null ? -1 : Long.parseLong(entry.value());
    } catch (NumberFormatException e) {
      batch = -1;
    }
    if (batch < 0 || batch > limits.maxTopicBatchBytes()) {
      throw new StreamException(
          StreamException.Kind.REFUSED,
          "the topic allows record batches of "
              + (batch < 0 ? "unknown size" : batch + " bytes")
              + ", more than BLOOM_STREAM_MAX_BATCH_BYTES ("
              + limits.maxTopicBatchBytes()
              + "): a fetch could not be bounded");
    }
  }

  @FunctionalInterface
  private interface Call<T> {
    T run(Deadline deadline) throws StreamException;
  }

  /**
   * The end of one read or position query ({@link StreamLimits#maxCallTime()} after it started):
   * each call to the broker gets what is left of it, at most {@link StreamLimits#requestTimeout()},
   * so all of them together hold the thread no longer.
   */
  private final class Deadline {
    private final long end = System.nanoTime() + limits.maxCallTime().toNanos();

    /** Nanoseconds left. */
    long left() {
      return Math.max(0, end - System.nanoTime());
    }

    /** The timeout of the next call; when none is left, the call fails at once (a timeout). */
    Duration call() {
      return Duration.ofNanos(Math.min(left(), limits.requestTimeout().toNanos()));
    }
  }

  /**
   * Runs {@code call} guarded; every failure becomes a {@link StreamException} with the operator's
   * own text. After a failure the clients are closed: the next call connects afresh.
   */
  private <T> T guarded(Call<T> call) throws StreamException {
    if (!ConnectGuard.available()) {
      throw new StreamException(
          StreamException.Kind.REFUSED,
          "Kafka change streams need an operator JVM that can check connections"
              + " (Java 17, or -Djava.security.manager=allow up to Java 23)");
    }
    try {
      Deadline deadline = new Deadline();
      return ConnectGuard.call(guard, () -> call.run(deadline));
    } catch (StreamException e) {
      if (e.kind() != StreamException.Kind.POSITION_LOST) {
        closeClients();
      }
      throw refusedOr(e);
    } catch (InvalidOffsetException e) {
      at = null;
      throw new StreamException(
          StreamException.Kind.POSITION_LOST,
          "the published stream position is no longer in the topic (retention passed it)");
    } catch (SecurityException e) {
      closeClients();
      throw refusedOr(new StreamException(StreamException.Kind.REFUSED, "connection refused"));
    } catch (AuthenticationException e) {
      closeClients();
      throw refusedOr(new StreamException(StreamException.Kind.UNAVAILABLE, authFailure(e)));
    } catch (KafkaException e) {
      closeClients();
      throw refusedOr(
          new StreamException(
              StreamException.Kind.UNAVAILABLE,
              "the broker could not be read (" + e.getClass().getSimpleName() + ")"));
    } catch (Exception e) {
      closeClients();
      throw refusedOr(
          new StreamException(
              StreamException.Kind.UNAVAILABLE,
              "the stream failed (" + e.getClass().getSimpleName() + ")"));
    }
  }

  /**
   * What failed, in the operator's words: the client's message may quote the broker's, which is not
   * the operator's to repeat.
   */
  static String authFailure(AuthenticationException e) {
    if (e instanceof SslAuthenticationException) {
      return "the TLS handshake with a broker failed: its certificate is not signed by the CA of"
          + " tls.caSecret (or the default trust store), or does not name the host connected to";
    }
    if (e instanceof SaslAuthenticationException) {
      return "a broker refused the SASL login: check the user name, password and mechanism of"
          + " sasl.credentialsSecret";
    }
    return "a broker could not be authenticated with (" + e.getClass().getSimpleName() + ")";
  }

  /** A failure after a refused connection is that refusal, whatever the client made of it. */
  private StreamException refusedOr(StreamException e) {
    if (guard.refused() == 0
        || e.kind() == StreamException.Kind.REFUSED && guard.lastRefusal().isEmpty()) {
      return e;
    }
    EgressPolicy.Refusal why = guard.lastRefusal().orElseThrow();
    return new StreamException(
        StreamException.Kind.REFUSED,
        "a broker address the cluster advertised "
            + why.text()
            + " (only the operator's BLOOM_HTTP_ALLOW can admit it); nothing was sent there");
  }

  /**
   * This stream, listing partitions every {@code every} (tests: a new partition without waiting).
   */
  KafkaChangeStream relistingEvery(Duration every) {
    relistEvery = every;
    config.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, Long.toString(every.toMillis()));
    return this;
  }

  /** Connections refused to this stream so far (a broker advertising a denied address). */
  public long refusedConnections() {
    return guard.refused();
  }

  private void closeClients() {
    at = null;
    listedAt = null;
    if (consumer != null) {
      try {
        consumer.close(org.apache.kafka.clients.consumer.CloseOptions.timeout(CLOSE_TIMEOUT));
      } catch (RuntimeException e) {
        LOG.debug("closing a change stream's consumer failed", e);
      }
      consumer = null;
    }
    if (admin != null) {
      try {
        admin.close(CLOSE_TIMEOUT);
      } catch (RuntimeException e) {
        LOG.debug("closing a change stream's admin client failed", e);
      }
      admin = null;
    }
  }

  @Override
  public void close() {
    closeClients();
  }
}
