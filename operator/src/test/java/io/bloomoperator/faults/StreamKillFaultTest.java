package io.bloomoperator.faults;

import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.servers.KafkaServer;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Fault 12 of docs/reliability.md with a Kafka topic of 3 partitions ({@code spec.changes.kafka})
 * on a broker of the test's own, restarted under the running operator: {@link StreamKillScenario}.
 */
@Tag("fault")
@RealKubernetes(crdDirs = "crds")
class StreamKillFaultTest {

  private static final String TOPIC = "keys";

  @Test
  void sigkilledOperatorAndRestartedBrokerLoseNoStreamedKey(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) throws Exception {
    StreamKillScenario.run(new KafkaStream(), client, ns, cluster);
  }

  private static final class KafkaStream implements StreamUnderTest {
    private final KafkaServer kafka = KafkaServer.start(KafkaServer.Options.defaults());

    @Override
    public String name() {
      return "stream-kill";
    }

    @Override
    public Map<String, String> operatorEnv() {
      // The Kafka client's own lines, to see what it made of the broker restart.
      return Map.of("BLOOM_KAFKA_LOG_LEVEL", System.getProperty("faults.kafkaLogLevel", "OFF"));
    }

    @Override
    public void prepare(KubernetesClient client, String namespace) {
      kafka.createTopic(TOPIC, 3, Map.of());
    }

    @Override
    public String sourceAndChanges() {
      return """
          source:
            inline: [seed-a, seed-b]
          changes:
            publishEvery: 1s
            kafka:
              bootstrapServers: ["%s"]
              topic: %s
          """
          .formatted(kafka.bootstrap(), TOPIC);
    }

    @Override
    public KeyWriter writer(int perSecond) {
      return new Producer(kafka.bootstrap(), perSecond);
    }

    @Override
    public void restart() throws Exception {
      kafka.restart();
    }

    @Override
    public void close() {
      kafka.close();
    }
  }

  /**
   * Produces with {@code acks=all}, idempotent; a key is acknowledged with where it landed. Sends
   * that fail (the broker restarting longer than the delivery timeout) are counted.
   */
  private static final class Producer extends StreamUnderTest.PacedKeyWriter {
    private final KafkaProducer<String, String> producer;

    Producer(String bootstrap, int perSecond) {
      super(perSecond, "stream-kill-producer");
      Properties p = new Properties();
      p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
      p.put(ProducerConfig.ACKS_CONFIG, "all");
      p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
      p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
      this.producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    @Override
    void send(String key) {
      producer.send(
          new ProducerRecord<>(TOPIC, key),
          (metadata, e) -> {
            if (e == null) {
              acknowledged(key, metadata.partition() + "/" + metadata.offset());
            } else {
              failedOnce();
            }
          });
    }

    @Override
    void flush() {
      producer.flush();
    }

    @Override
    public void close() throws Exception {
      super.close();
      producer.close(Duration.ofSeconds(10));
    }
  }
}
