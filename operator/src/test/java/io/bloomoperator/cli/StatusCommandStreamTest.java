package io.bloomoperator.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.BloomFilterSpec;
import io.bloomoperator.api.BloomFilterStatus;
import io.bloomoperator.api.SourceSpec;
import io.bloomoperator.api.StreamStatus;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code kubectl bloom status} shows where a filter's change stream stands. */
class StatusCommandStreamTest {

  private static String print(StreamStatus stream) {
    BloomFilter filter = new BloomFilter();
    filter.setMetadata(
        new ObjectMetaBuilder().withNamespace("shop").withName("ids").withGeneration(1L).build());
    BloomFilterSpec spec = new BloomFilterSpec();
    SourceSpec source = new SourceSpec();
    source.setInline(List.of("a"));
    spec.setSource(source);
    filter.setSpec(spec);
    BloomFilterStatus status = new BloomFilterStatus();
    status.setStream(stream);
    filter.setStatus(status);
    StringWriter text = new StringWriter();
    StatusCommand.print(filter, new PrintWriter(text), Instant.parse("2026-12-02T16:00:00Z"));
    return text.toString();
  }

  @Test
  void aStreamThatIsReadShowsItsPositionLagAndPendingDeletes() {
    StreamStatus stream = new StreamStatus();
    stream.setPosition("0:120,1:87");
    stream.setLag(3L);
    stream.setLastDeltaAt("2026-12-02T15:59:58Z");
    stream.setAddsApplied(200L);
    stream.setDeletionsPending(2L);
    assertThat(print(stream))
        .contains("Stream:         at 0:120,1:87, 3 events behind, last delta 2026-12-02T15:59:58Z")
        .contains(
            "Since build:    200 adds published, 2 deletes pending the next full build,"
                + " 0 malformed events");
  }

  @Test
  void countingDeletionsShowWhetherDeletesGoOutInDeltas() {
    StreamStatus stream = new StreamStatus();
    stream.setPosition("0:5");
    stream.setDeletions("Counting");
    stream.setDeletionsApplied(3L);
    assertThat(print(stream))
        .contains("Deletions:      Counting, 3 published by deltas since build");
    stream.setDeletions("Rebuild until the next full build: no counting shadow");
    stream.setDeletionsApplied(null);
    assertThat(print(stream))
        .contains("Deletions:      Rebuild until the next full build: no counting shadow");
  }

  @Test
  void aStreamThatIsNotReadSaysWhy() {
    StreamStatus stream = new StreamStatus();
    stream.setMessage("the namespace has 4 change streams open");
    assertThat(print(stream))
        .contains("Stream:         not read: the namespace has 4 change streams open")
        .doesNotContain("Since build:");
  }

  @Test
  void aFilterWithoutAStreamShowsNoStreamLine() {
    assertThat(print(null)).doesNotContain("Stream:");
  }
}
