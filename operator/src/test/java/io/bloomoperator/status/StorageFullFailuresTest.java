package io.bloomoperator.status;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The in-memory record of a full etcd: backoff from when writes started failing, and the flag. */
class StorageFullFailuresTest {

  private static final Instant T0 = Instant.parse("2026-11-30T22:00:00Z");

  private static BloomFilter filter(String uid) {
    BloomFilter filter = new BloomFilter();
    filter.getMetadata().setName("f-" + uid);
    filter.getMetadata().setNamespace("ns");
    filter.getMetadata().setUid(uid);
    return filter;
  }

  @Test
  void backoffGrowsWithHowLongWritesHaveFailedAndIsClamped() {
    StorageFullFailures failures = new StorageFullFailures();
    BloomFilter a = filter("a");
    assertThat(failures.refused(a, T0)).isEqualTo(Duration.ofSeconds(2));
    assertThat(failures.refused(a, T0.plusSeconds(1))).isEqualTo(Duration.ofSeconds(2));
    assertThat(failures.refused(a, T0.plusSeconds(40))).isEqualTo(Duration.ofSeconds(40));
    assertThat(failures.refused(a, T0.plusSeconds(4_000))).isEqualTo(Duration.ofMinutes(5));
    // Per filter: another filter starts its own backoff.
    assertThat(failures.refused(filter("b"), T0.plusSeconds(40))).isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void aRefusedPublishStaysUnrecordedUntilAStatusWriteGoesThrough() {
    StorageFullFailures failures = new StorageFullFailures();
    BloomFilter a = filter("a");
    failures.refused(a, T0);
    assertThat(failures.unrecordedSince(a)).as("a status write only").isEmpty();
    failures.publishRefused(a);
    failures.refused(a, T0.plusSeconds(10));
    assertThat(failures.unrecordedSince(a)).contains(T0);
    failures.cleared(a);
    assertThat(failures.unrecordedSince(a)).isEmpty();
    assertThat(failures.refused(a, T0.plusSeconds(60))).isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void publishRefusedWithoutARefusedWriteRecordsNothing() {
    StorageFullFailures failures = new StorageFullFailures();
    BloomFilter a = filter("a");
    failures.publishRefused(a);
    assertThat(failures.unrecordedSince(a)).isEmpty();
  }
}
