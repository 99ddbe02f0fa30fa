package io.bloomoperator.changes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.api.KafkaChangesSpec;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.source.EgressPolicy;
import io.bloomoperator.testing.servers.ConnectionCounter;
import io.bloomoperator.testing.servers.KafkaServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** The Kafka change stream against a real broker (Apache Kafka 4.x, KRaft, its own JVM). */
class KafkaChangeStreamTest {

  /** The test servers listen on loopback, which the default policy denies. */
  private static final EgressPolicy LOOPBACK_ONLY = EgressPolicy.of("127.0.0.1/32", null);

  private static KafkaChangesSpec spec(KafkaServer kafka, String topic) {
    KafkaChangesSpec spec = new KafkaChangesSpec();
    spec.setBootstrapServers(List.of(kafka.bootstrap()));
    spec.setTopic(topic);
    return spec;
  }

  private static KafkaChangeStream stream(KafkaChangesSpec spec, KeyType type, EgressPolicy egress)
      throws StreamException {
    return new KafkaChangeStream(
        spec, type, StreamLimits.defaults(), egress, "test-" + UUID.randomUUID());
  }

  private static String topic() {
    return "keys-" + UUID.randomUUID();
  }

  /** Reads until {@code expected} adds arrived or ten seconds passed; the last batch's position. */
  private static StreamPosition readAll(
      ChangeStream stream, StreamPosition from, int expected, List<String> into)
      throws StreamException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    StreamPosition at = from;
    while (into.size() < expected && System.nanoTime() < deadline) {
      ChangeStream.Batch batch = stream.read(at);
      into.addAll(batch.adds());
      at = batch.next();
    }
    return at;
  }

  @Test
  void readsEveryPartitionFromTheGivenPositionWithoutAConsumerGroup() throws Exception {
    KafkaServer kafka = KafkaServer.shared();
    String topic = topic();
    kafka.createTopic(topic, 3, Map.of());
    List<String> keys = IntStream.range(0, 300).mapToObj(i -> "sku-" + i).toList();
    kafka.produce(topic, keys);

    try (KafkaChangeStream stream = stream(spec(kafka, topic), KeyType.STRING, LOOPBACK_ONLY)) {
      List<String> read = new ArrayList<>();
      StreamPosition end = readAll(stream, StreamPosition.start(), keys.size(), read);
      assertThat(read).containsExactlyInAnyOrderElementsOf(keys);
      assertThat(end.offsets()).containsOnlyKeys(0, 1, 2);
      assertThat(end.eventsSince(StreamPosition.start())).isEqualTo(300);

      // Nothing new: an empty read at the same position.
      ChangeStream.Batch again = stream.read(end);
      assertThat(again.adds()).isEmpty();
      assertThat(again.next()).isEqualTo(end);
      assertThat(again.lag()).isZero();

      // A publish that failed reads again from the published position: adds at least once.
      List<String> reread = new ArrayList<>();
      readAll(stream, StreamPosition.start(), keys.size(), reread);
      assertThat(reread).containsExactlyInAnyOrderElementsOf(keys);
    }
    try (Admin admin = admin(kafka)) {
      assertThat(admin.listGroups().all().get()).isEmpty(); // no group, no committed offsets
    }
  }

  @Test
  void aFullBuildsPositionIsTakenFromTheTimeItsScanStarted() throws Exception {
    KafkaServer kafka = KafkaServer.shared();
    String topic = topic();
    kafka.createTopic(topic, 2, Map.of());
    kafka.produce(topic, List.of("before-1", "before-2"));
    Thread.sleep(50);
    Instant scanStart = Instant.now();
    kafka.produce(topic, List.of("during-1", "during-2", "during-3"));

    try (KafkaChangeStream stream = stream(spec(kafka, topic), KeyType.STRING, LOOPBACK_ONLY)) {
      StreamPosition from = stream.positionAt(scanStart);
      List<String> read = new ArrayList<>();
      readAll(stream, from, 3, read);
      assertThat(read).containsExactlyInAnyOrder("during-1", "during-2", "during-3");
      // Nothing produced after a time: the end of every partition.
      StreamPosition end = stream.positionAt(Instant.now().plusSeconds(60));
      assertThat(end.eventsSince(StreamPosition.start())).isEqualTo(5);
    }
  }

  @Test
  void aNewPartitionIsReadFromItsStart() throws Exception {
    KafkaServer kafka = KafkaServer.shared();
    String topic = topic();
    kafka.createTopic(topic, 1, Map.of());
    kafka.produce(topic, List.of("a"));
    try (KafkaChangeStream stream =
        stream(spec(kafka, topic), KeyType.STRING, LOOPBACK_ONLY)
            .relistingEvery(Duration.ofMillis(200))) {
      List<String> read = new ArrayList<>();
      StreamPosition at = readAll(stream, StreamPosition.start(), 1, read);
      kafka.addPartitions(topic, 2);
      kafka.produce(topic, 1, null, "in-the-new-partition");
      Thread.sleep(300);
      readAll(stream, at, 2, read);
      assertThat(read).containsExactly("a", "in-the-new-partition");
    }
  }

  @Test
  void aPositionRetentionPassedIsLostNotSkipped() throws Exception {
    KafkaServer kafka = KafkaServer.shared();
    String topic = topic();
    kafka.createTopic(topic, 1, Map.of());
    kafka.produce(topic, IntStream.range(0, 10).mapToObj(i -> "k" + i).toList());
    try (Admin admin = admin(kafka)) {
      admin
          .deleteRecords(Map.of(new TopicPartition(topic, 0), RecordsToDelete.beforeOffset(6)))
          .all()
          .get();
    }
    try (KafkaChangeStream stream = stream(spec(kafka, topic), KeyType.STRING, LOOPBACK_ONLY)) {
      assertThatThrownBy(() -> stream.read(StreamPosition.parse("0:2")))
          .isInstanceOfSatisfying(
              StreamException.class,
              e -> assertThat(e.kind()).isEqualTo(StreamException.Kind.POSITION_LOST));
      // The stream itself goes on: from a position still in the topic.
      List<String> read = new ArrayList<>();
      readAll(stream, StreamPosition.parse("0:6"), 4, read);
      assertThat(read).containsExactly("k6", "k7", "k8", "k9");
    }
  }

  @Test
  void aTopicAllowingHugeBatchesIsRefusedBeforeAnythingIsFetched() throws Exception {
    KafkaServer kafka = KafkaServer.shared();
    String topic = topic();
    kafka.createTopic(topic, 1, Map.of("max.message.bytes", Integer.toString(64 * 1024 * 1024)));
    try (KafkaChangeStream stream = stream(spec(kafka, topic), KeyType.STRING, LOOPBACK_ONLY)) {
      assertThatThrownBy(() -> stream.read(StreamPosition.start()))
          .isInstanceOfSatisfying(
              StreamException.class,
              e -> {
                assertThat(e.kind()).isEqualTo(StreamException.Kind.REFUSED);
                assertThat(e.getMessage())
                    .contains("67108864 bytes")
                    .contains("BLOOM_STREAM_MAX_BATCH_BYTES");
              });
    }
  }

  @Test
  void eventsThatAreNotKeysAreCountedNotApplied() throws Exception {
    KafkaServer kafka = KafkaServer.shared();
    String topic = topic();
    kafka.createTopic(topic, 1, Map.of());
    kafka.produce(topic, List.of("17", "not-a-number", "-4"));
    try (KafkaChangeStream stream = stream(spec(kafka, topic), KeyType.LONG, LOOPBACK_ONLY)) {
      ChangeStream.Batch batch = null;
      long malformed = 0;
      List<String> read = new ArrayList<>();
      StreamPosition at = StreamPosition.start();
      for (int i = 0; i < 20 && at.eventsSince(StreamPosition.start()) < 3; i++) {
        batch = stream.read(at);
        read.addAll(batch.adds());
        malformed += batch.malformed();
        at = batch.next();
      }
      assertThat(read).containsExactly("17", "-4");
      assertThat(malformed).isEqualTo(1);
    }
  }

  @Test
  void aBootstrapServerThePolicyRefusesIsNeverContacted() {
    KafkaServer kafka = KafkaServer.shared();
    assertThatThrownBy(() -> stream(spec(kafka, topic()), KeyType.STRING, EgressPolicy.defaults()))
        .isInstanceOfSatisfying(
            StreamException.class,
            e -> {
              assertThat(e.kind()).isEqualTo(StreamException.Kind.REFUSED);
              assertThat(e.getMessage()).contains("loopback").contains("bootstrap");
            });
  }

  /**
   * The attack: a broker whose metadata advertises an address the policy denies (127.0.0.2 here;
   * the cloud metadata endpoint in real life). The bootstrap address is allowed, the advertised one
   * not: no connection may reach it. The control run, with the advertised address allowed, shows
   * the client does go there when nothing stops it, so the count of 0 is the guard's doing.
   */
  @Test
  void noConnectionReachesABrokerAddressThePolicyDenies() throws Exception {
    try (ConnectionCounter advertised = ConnectionCounter.open("127.0.0.2");
        KafkaServer kafka =
            KafkaServer.start(KafkaServer.Options.advertising("127.0.0.2", advertised.port()))) {
      String topic = topic();
      kafka.createTopic(topic, 1, Map.of());
      try (KafkaChangeStream stream = stream(spec(kafka, topic), KeyType.STRING, LOOPBACK_ONLY)) {
        for (int i = 0; i < 3; i++) {
          assertThatThrownBy(() -> stream.read(StreamPosition.start()))
              .isInstanceOfSatisfying(
                  StreamException.class,
                  e -> {
                    assertThat(e.kind()).isEqualTo(StreamException.Kind.REFUSED);
                    assertThat(e.getMessage()).contains("advertised").contains("loopback");
                  });
        }
        assertThat(stream.refusedConnections()).isPositive();
      }
      Thread.sleep(500);
      assertThat(advertised.count()).isZero();

      EgressPolicy allowingIt = EgressPolicy.of("127.0.0.0/8", null);
      try (KafkaChangeStream stream = stream(spec(kafka, topic), KeyType.STRING, allowingIt)) {
        try {
          stream.read(StreamPosition.start());
        } catch (StreamException expected) {
          // the counter is no broker: the read fails, after connecting
        }
      }
      assertThat(advertised.count()).isPositive();
    }
  }

  /**
   * A broker that accepts connections and never answers (a black-holed address): a read and a
   * position query each fail within the stream's maxCallTime, not at the client's own defaults (60
   * s for an API call), so they hold their reconcile thread no longer.
   */
  @Test
  void aBrokerThatNeverAnswersHoldsAReadNoLongerThanItsCallTime() throws Exception {
    StreamLimits limits = StreamLimits.defaults();
    Duration bound = limits.maxCallTime().plusSeconds(1); // and closing the clients
    try (ConnectionCounter hanging = ConnectionCounter.silent("127.0.0.1")) {
      KafkaChangesSpec spec = new KafkaChangesSpec();
      spec.setBootstrapServers(List.of(hanging.address()));
      spec.setTopic(topic());
      try (KafkaChangeStream stream = stream(spec, KeyType.STRING, LOOPBACK_ONLY)) {
        for (int i = 0; i < 2; i++) {
          long start = System.nanoTime();
          assertThatThrownBy(() -> stream.read(StreamPosition.start()))
              .isInstanceOfSatisfying(
                  StreamException.class,
                  e -> assertThat(e.kind()).isEqualTo(StreamException.Kind.UNAVAILABLE));
          Duration read = Duration.ofNanos(System.nanoTime() - start);
          start = System.nanoTime();
          assertThatThrownBy(() -> stream.positionAt(Instant.now()))
              .isInstanceOfSatisfying(
                  StreamException.class,
                  e -> assertThat(e.kind()).isEqualTo(StreamException.Kind.UNAVAILABLE));
          Duration position = Duration.ofNanos(System.nanoTime() - start);
          System.out.printf(
              "hanging broker: read failed after %d ms, position query after %d ms%n",
              read.toMillis(), position.toMillis());
          assertThat(read).isLessThan(bound);
          assertThat(position).isLessThan(bound);
        }
      }
      assertThat(hanging.count()).as("the client did connect: its timeouts ended it").isPositive();
    }
  }

  /**
   * A read collects no more keys than it reserved heap for, stopping inside a fetched batch if it
   * must; the next read resumes exactly after the last key collected, so none is lost or read
   * twice.
   */
  @Test
  void aReadCollectsNoMoreKeysThanItReservedAndTheNextResumesWhereItStopped() throws Exception {
    KafkaServer kafka = KafkaServer.shared();
    String topic = topic();
    kafka.createTopic(topic, 2, Map.of());
    List<String> keys = IntStream.range(0, 3000).mapToObj(i -> "key-%08d".formatted(i)).toList();
    kafka.produce(topic, keys);
    long cap = 100 * StreamLimits.keyBytes("key-00000000".length());
    List<String> read = new ArrayList<>();
    int batches = 0;
    try (KafkaChangeStream stream = stream(spec(kafka, topic), KeyType.STRING, LOOPBACK_ONLY)) {
      StreamPosition at = StreamPosition.start();
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (read.size() < keys.size() && System.nanoTime() < deadline) {
        ChangeStream.Batch batch = stream.read(at, cap);
        assertThat(batch.adds()).hasSizeLessThanOrEqualTo(100);
        assertThat(batch.next().eventsSince(at)).isEqualTo(batch.adds().size());
        read.addAll(batch.adds());
        at = batch.next();
        batches++;
      }
    }
    assertThat(read).hasSameSizeAs(keys).containsExactlyInAnyOrderElementsOf(keys);
    assertThat(batches).isGreaterThanOrEqualTo(30);
  }

  private static Admin admin(KafkaServer kafka) {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrap());
    return Admin.create(p);
  }
}
