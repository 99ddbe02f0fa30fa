package io.bloomoperator.testing.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.testing.servers.KafkaServer.Options;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

/**
 * What the Kafka change-stream tests (issue 29) rely on, on a real broker ({@link KafkaServer}):
 * records read back exactly with a group-less consumer ({@code assign} + {@code seekToBeginning}),
 * the same after a clean restart and after a kill, topic configs as set, partitions added, and a
 * broker that advertises another address than it listens on really sending clients there.
 */
class KafkaServerSmokeTest {

  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  @Test
  void recordsAreReadBackExactlyAndSurviveARestartAndAKill() throws Exception {
    long t0 = System.nanoTime();
    try (KafkaServer kafka = KafkaServer.start(Options.defaults())) {
      long startMillis = millisSince(t0);
      kafka.createTopic("changes", 3, Map.of());
      List<String> values = IntStream.range(0, 30).mapToObj(i -> "value-" + i).toList();
      kafka.produce("changes", values);
      kafka.produce("changes", 1, "k1", "keyed-a");
      kafka.produce("changes", 1, "k2", "keyed-b");

      List<String> before = readAll(kafka.bootstrap(), "changes", 3);

      assertThat(before.stream().map(r -> r.substring(r.lastIndexOf('/') + 1)))
          .containsExactlyInAnyOrderElementsOf(
              Stream.concat(values.stream(), Stream.of("keyed-a", "keyed-b")).toList());
      List<String> partition1 = before.stream().filter(r -> r.startsWith("1/")).toList();
      assertThat(partition1)
          .endsWith(
              "1/" + (partition1.size() - 2) + "/k1/keyed-a",
              "1/" + (partition1.size() - 1) + "/k2/keyed-b");
      assertThat(kafka.logDir().resolve("changes-0")).isDirectory();

      long t1 = System.nanoTime();
      kafka.restart();
      long restartMillis = millisSince(t1);
      assertThat(readAll(kafka.bootstrap(), "changes", 3)).isEqualTo(before);

      kafka.kill();
      long t2 = System.nanoTime();
      kafka.restart();
      long killRestartMillis = millisSince(t2);
      assertThat(readAll(kafka.bootstrap(), "changes", 3)).isEqualTo(before);
      // Still taking writes, at the next offset of the partition.
      assertThat(kafka.produce("changes", 1, "k3", "after").offset()).isEqualTo(partition1.size());

      System.out.printf(
          "KafkaServer: start (format + broker) %d ms, restart after SIGTERM %d ms,"
              + " restart after SIGKILL %d ms%n",
          startMillis, restartMillis, killRestartMillis);
    }
  }

  @Test
  void topicConfigsAreAppliedAndPartitionsAdded() throws Exception {
    KafkaServer kafka = KafkaServer.shared();
    kafka.createTopic("large-records", 1, Map.of("max.message.bytes", "67108864"));
    kafka.createTopic("growing", 1, Map.of());
    kafka.addPartitions("growing", 4);

    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrap()))) {
      ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, "large-records");
      Config config =
          admin.describeConfigs(List.of(topic)).all().get(30, TimeUnit.SECONDS).get(topic);
      assertThat(config.get("max.message.bytes").value()).isEqualTo("67108864");
      assertThat(
              admin
                  .describeTopics(List.of("growing"))
                  .allTopicNames()
                  .get(30, TimeUnit.SECONDS)
                  .get("growing")
                  .partitions())
          .hasSize(4);
    }
    kafka.produce("growing", 3, "k", "in-a-new-partition");
    assertThat(readAll(kafka.bootstrap(), "growing", 4))
        .containsExactly("3/0/k/in-a-new-partition");
  }

  @Test
  void aClientConnectsToTheAdvertisedAddressNotTheOneItBootstrappedFrom() {
    try (ConnectionCounter counter = ConnectionCounter.open("127.0.0.2");
        KafkaServer kafka =
            KafkaServer.start(Options.advertising(counter.host(), counter.port()))) {
      kafka.createTopic("elsewhere", 1, Map.of());
      kafka.produce("elsewhere", List.of("only-on-127.0.0.1"));
      // The broker's own traffic and this fixture's clients do not use the advertised address.
      assertThat(counter.count()).isZero();

      List<ConsumerRecord<String, String>> received = new ArrayList<>();
      try (KafkaConsumer<String, String> consumer = consumer(kafka.bootstrap())) {
        TopicPartition partition = new TopicPartition("elsewhere", 0);
        consumer.assign(List.of(partition));
        consumer.seekToBeginning(List.of(partition));
        await()
            .atMost(TIMEOUT)
            .until(
                () -> {
                  consumer.poll(Duration.ofMillis(200)).forEach(received::add);
                  return counter.count() > 0;
                });
      }
      // It bootstrapped at 127.0.0.1, where the record is, and then went only where it was told.
      assertThat(received).isEmpty();
    }
  }

  /** Every record of {@code topic} as "partition/offset/key/value", by partition then offset. */
  private static List<String> readAll(String bootstrap, String topic, int partitions) {
    try (KafkaConsumer<String, String> consumer = consumer(bootstrap)) {
      List<TopicPartition> all =
          IntStream.range(0, partitions).mapToObj(p -> new TopicPartition(topic, p)).toList();
      consumer.assign(all);
      consumer.seekToBeginning(all);
      Map<TopicPartition, Long> end = consumer.endOffsets(all, TIMEOUT);
      List<ConsumerRecord<String, String>> records = new ArrayList<>();
      long deadline = System.nanoTime() + TIMEOUT.toNanos();
      while (all.stream().anyMatch(p -> consumer.position(p, TIMEOUT) < end.get(p))) {
        assertThat(System.nanoTime()).as("reading %s to its end", topic).isLessThan(deadline);
        consumer.poll(Duration.ofMillis(500)).forEach(records::add);
      }
      return records.stream()
          .sorted(
              Comparator.comparingInt((ConsumerRecord<String, String> r) -> r.partition())
                  .thenComparingLong(ConsumerRecord::offset))
          .map(r -> r.partition() + "/" + r.offset() + "/" + r.key() + "/" + r.value())
          .toList();
    }
  }

  /** A consumer without a group: nothing committed, nothing rebalanced. */
  private static KafkaConsumer<String, String> consumer(String bootstrap) {
    return new KafkaConsumer<>(
        Map.of(
            ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrap,
            ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
            false),
        new StringDeserializer(),
        new StringDeserializer());
  }

  private static long millisSince(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos);
  }
}
