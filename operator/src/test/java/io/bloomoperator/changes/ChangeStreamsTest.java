package io.bloomoperator.changes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.BloomFilterSpec;
import io.bloomoperator.api.ChangesSpec;
import io.bloomoperator.api.KafkaChangesSpec;
import io.bloomoperator.snapshot.KeyType;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The per-namespace and operator-wide bounds on open change streams, and their life cycle. */
class ChangeStreamsTest {

  /** Records what was opened and closed; reads nothing (the real reader: KafkaChangeStreamTest). */
  private static final class Opened implements ChangeStream {
    final String clientId;
    boolean closed;

    Opened(String clientId) {
      this.clientId = clientId;
    }

    @Override
    public StreamPosition positionAt(Instant time) {
      return StreamPosition.start();
    }

    @Override
    public Batch read(StreamPosition from) {
      return new Batch(List.of(), 0, 0, from, 0, null);
    }

    @Override
    public void close() {
      closed = true;
    }
  }

  private final List<Opened> opened = new ArrayList<>();

  private ChangeStreams streams(int perNamespace, int total) {
    StreamLimits limits =
        StreamLimits.defaults().toBuilder()
            .streamsPerNamespace(perNamespace)
            .streams(total)
            .build();
    return new ChangeStreams(
        limits,
        (filter, keyType, clientId, secrets) -> {
          Opened o = new Opened(clientId);
          opened.add(o);
          return o;
        });
  }

  private static BloomFilter filter(String namespace, String name, String topic) {
    BloomFilter filter = new BloomFilter();
    filter.setMetadata(
        new ObjectMetaBuilder()
            .withNamespace(namespace)
            .withName(name)
            .withUid(namespace + "/" + name)
            .build());
    BloomFilterSpec spec = new BloomFilterSpec();
    if (topic != null) {
      ChangesSpec changes = new ChangesSpec();
      KafkaChangesSpec kafka = new KafkaChangesSpec();
      kafka.setBootstrapServers(List.of("kafka.shop:9092"));
      kafka.setTopic(topic);
      changes.setKafka(kafka);
      spec.setChanges(changes);
    }
    filter.setSpec(spec);
    return filter;
  }

  @Test
  void oneNamespaceCannotTakeEveryStream() throws Exception {
    ChangeStreams streams = streams(2, 3);
    streams.of(filter("a", "f1", "t"), KeyType.STRING);
    streams.of(filter("a", "f2", "t"), KeyType.STRING);
    assertThatThrownBy(() -> streams.of(filter("a", "f3", "t"), KeyType.STRING))
        .isInstanceOfSatisfying(
            StreamException.class,
            e -> {
              assertThat(e.kind()).isEqualTo(StreamException.Kind.REFUSED);
              assertThat(e.getMessage()).contains("BLOOM_STREAMS_PER_NAMESPACE");
            });
    // Another namespace still gets its stream; the operator-wide bound comes next.
    streams.of(filter("b", "f1", "t"), KeyType.STRING);
    assertThatThrownBy(() -> streams.of(filter("c", "f1", "t"), KeyType.STRING))
        .hasMessageContaining("BLOOM_MAX_STREAMS");
    assertThat(opened).hasSize(3);
  }

  @Test
  void aStreamIsKeptAcrossReconcilesReopenedForANewSpecAndClosedWhenItGoes() throws Exception {
    ChangeStreams streams = streams(1, 10);
    FilterChanges first = streams.of(filter("a", "f", "t1"), KeyType.STRING);
    streams.of(filter("a", "f", "t1"), KeyType.STRING);
    assertThat(opened).hasSize(1);
    assertThat(opened.get(0).clientId).isEqualTo("bloom-operator-a-f");

    // A new topic: the old stream is closed first, so the namespace's one place is free again.
    streams.of(filter("a", "f", "t2"), KeyType.STRING);
    assertThat(opened).hasSize(2);
    assertThat(opened.get(0).closed).isTrue();

    // spec.changes removed: closed, and nothing to read.
    assertThat(streams.of(filter("a", "f", null), KeyType.STRING)).isNull();
    assertThat(opened.get(1).closed).isTrue();
    assertThat(streams.open()).isZero();

    streams.of(filter("a", "g", "t"), KeyType.STRING);
    streams.close("a/g");
    assertThat(opened.get(2).closed).isTrue();
    assertThat(first.spec().publishInterval()).isEqualTo(Duration.ofSeconds(2));
    assertThat(first.spec().overlapInterval()).isEqualTo(Duration.ofSeconds(30));
  }
}
