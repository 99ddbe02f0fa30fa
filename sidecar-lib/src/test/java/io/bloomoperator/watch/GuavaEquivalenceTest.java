package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * The filter served from the API server answers exactly as Guava does when Guava reads the same
 * published payload, for 1,000,000 keys (half present, half random) of each type.
 */
@RealKubernetes
class GuavaEquivalenceTest {

  private static final int PRESENT = 500_000;
  private static final int ABSENT = 500_000;

  @Test
  void stringAnswersEqualGuava(KubernetesClient client, TestNamespace ns) throws IOException {
    Random random = new Random(20250131L);
    List<String> present = TestKeys.randomStrings(random, PRESENT);
    List<String> absent = TestKeys.randomStrings(random, ABSENT);
    BloomFilterBits bits = TestKeys.stringFilter(1_000_000, present);
    SnapshotPublisher.Published published =
        new SnapshotPublisher(client, ns.name(), "strings").publish(bits, PRESENT, 1);
    assertThat(published.manifest().chunks()).hasSizeGreaterThan(1); // operator-sized chunks
    BloomFilter<CharSequence> guava =
        BloomFilter.readFrom(
            new ByteArrayInputStream(published.payload()),
            Funnels.stringFunnel(StandardCharsets.UTF_8));

    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.watch(client, ns.name(), "strings", LiveKeyType.STRING)) {
      assertThat(live.awaitReady(Duration.ofSeconds(10))).isTrue();
      for (List<String> keys : List.of(present, absent)) {
        for (String key : keys) {
          boolean ours = live.mightContain(key);
          if (ours != guava.mightContain(key)) {
            throw new AssertionError("differs from Guava for " + escape(key) + ": " + ours);
          }
        }
      }
      assertThat(present).allMatch(live::mightContain);
      Set<String> presentSet = new HashSet<>(present);
      assertFalsePositivesPlausible(
          absent.stream()
              .filter(key -> !presentSet.contains(key) && live.mightContain(key))
              .count());
      assertThat(live.lookups()).isGreaterThanOrEqualTo(PRESENT + ABSENT);
    }
  }

  @Test
  void longAnswersEqualGuava(KubernetesClient client, TestNamespace ns) throws IOException {
    Random random = new Random(42L);
    long[] present = TestKeys.randomLongs(random, PRESENT);
    long[] absent = TestKeys.randomLongs(random, ABSENT);
    BloomFilterBits bits = TestKeys.longFilter(1_000_000, present);
    SnapshotPublisher.Published published =
        new SnapshotPublisher(client, ns.name(), "longs").publish(bits, PRESENT, 7);
    BloomFilter<Long> guava =
        BloomFilter.readFrom(new ByteArrayInputStream(published.payload()), Funnels.longFunnel());

    try (LiveBloomFilter<Long> live =
        BloomFilterWatcher.watch(client, ns.name(), "longs", LiveKeyType.LONG)) {
      assertThat(live.awaitReady(Duration.ofSeconds(10))).isTrue();
      assertThat(live.currentVersion()).isEqualTo(7);
      for (long[] keys : new long[][] {present, absent}) {
        for (long key : keys) {
          boolean ours = live.mightContain(key);
          if (ours != guava.mightContain(key)) {
            throw new AssertionError("differs from Guava for " + key + ": " + ours);
          }
        }
      }
      for (long key : present) {
        assertThat(live.mightContain(key)).isTrue();
      }
      Set<Long> presentSet = LongStream.of(present).boxed().collect(Collectors.toSet());
      assertFalsePositivesPlausible(
          LongStream.of(absent)
              .filter(key -> !presentSet.contains(key) && live.mightContain(key))
              .count());
    }
  }

  /**
   * Sized for 1M keys at 1 % and holding 500k, absent keys (random ones that happen to be present,
   * such as short strings and small longs, excluded) should hit well under 1 %: a check that the
   * filter is a real one, on top of the exact comparison with Guava.
   */
  private static void assertFalsePositivesPlausible(long falsePositives) {
    assertThat(falsePositives).isBetween(0L, (long) (ABSENT * 0.01));
  }

  private static String escape(String key) {
    StringBuilder sb = new StringBuilder("\"");
    key.chars()
        .forEach(
            c ->
                sb.append(
                    c < 32 || c > 126 ? String.format("\\u%04x", c) : String.valueOf((char) c)));
    return sb.append('"').toString();
  }
}
