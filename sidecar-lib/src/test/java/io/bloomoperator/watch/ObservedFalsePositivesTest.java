package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * The observed false-positive rate with known key sets: the application (this test) knows which
 * keys its store has and reports the outcome of every "maybe present" answer, or a sample of them.
 * Bounds are 4 standard deviations of the binomial (plus the sampling error where only some answers
 * are reported) around the manifest's expected rate: wide enough never to flake (p ~ 6e-5), narrow
 * enough that an estimator ignoring the "definitely absent" answers (which reports ~50%) or a stale
 * filter (below) fails them by far.
 */
@RealKubernetes
class ObservedFalsePositivesTest {

  private static final String FILTER = "product-ids";
  private static final Duration READY = Duration.ofSeconds(10);
  private static final int PRESENT = 20_000;
  private static final int ABSENT = 200_000;

  @Test
  void observedRateMatchesExpectedWhenEveryAnswerIsReported(
      KubernetesClient client, TestNamespace ns) {
    List<String> present = TestKeys.strings("present", PRESENT);
    Set<String> store = new HashSet<>(present);
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), FILTER);
    BloomFilterBits bits = TestKeys.stringFilter(PRESENT, present);
    double expected = publisher.publish(bits, PRESENT, 1).manifest().expectedFpp();

    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.watch(client, ns.name(), FILTER, LiveKeyType.STRING)) {
      assertThat(live.awaitReady(READY)).isTrue();
      await().atMost(READY).until(() -> live.observedFalsePositives().version() == 1);

      long falsePositives = lookUpAndReport(live, present, store, answer -> true);

      FalsePositiveObservation observed = live.observedFalsePositives();
      assertThat(observed.version()).isEqualTo(1);
      assertThat(observed.lookups()).isEqualTo(PRESENT + ABSENT);
      assertThat(observed.maybePresent()).isEqualTo(PRESENT + falsePositives);
      assertThat(observed.truePositives()).isEqualTo(PRESENT);
      assertThat(observed.falsePositives()).isEqualTo(falsePositives);
      // Every answer reported: the estimate is exactly FP / (FP + TN) over the absent keys.
      assertThat(observed.rate()).isEqualTo((double) falsePositives / ABSENT);
      double sigma = Math.sqrt(expected * (1 - expected) / ABSENT);
      System.out.printf(
          "observed %.5f, expected %.5f (bits' own %.5f), 4 sigma = %.5f%n",
          observed.rate(), expected, bits.currentFpp(), 4 * sigma);
      assertThat(observed.rate()).isCloseTo(expected, within(4 * sigma));
      assertThat(live.truePositives()).isEqualTo(PRESENT);
      assertThat(live.falsePositives()).isEqualTo(falsePositives);
    }
  }

  @Test
  void sampledOutcomesEstimateTheRateAndAStaleVersionShowsUp(
      KubernetesClient client, TestNamespace ns) {
    List<String> present = TestKeys.strings("present", PRESENT);
    Set<String> store = new HashSet<>(present);
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), FILTER);
    double expected =
        publisher
            .publish(TestKeys.stringFilter(PRESENT, present), PRESENT, 1)
            .manifest()
            .expectedFpp();

    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.watch(client, ns.name(), FILTER, LiveKeyType.STRING)) {
      assertThat(live.awaitReady(READY)).isTrue();
      await().atMost(READY).until(() -> live.observedFalsePositives().version() == 1);

      // Only every third maybe-present answer is reported: a sample blind to the outcome.
      int[] answers = {0};
      lookUpAndReport(live, present, store, key -> answers[0]++ % 3 == 0);
      FalsePositiveObservation observed = live.observedFalsePositives();
      assertThat(observed.reported()).isLessThan(observed.maybePresent() / 2);
      double bound =
          4 * sampledSigma(expected, ABSENT, observed.maybePresent(), observed.reported());
      System.out.printf(
          "sampled: observed %.5f, expected %.5f, 4 sigma = %.5f%n",
          observed.rate(), expected, bound);
      assertThat(observed.rate()).isCloseTo(expected, within(bound));

      // Version 2 is built from the same keys, but then the store loses half of them (deleted
      // products, a source the operator has not read again): the filter is stale. Its counts
      // start from zero, and its observed rate is far above the expected one.
      publisher.publish(TestKeys.stringFilter(PRESENT, present), PRESENT, 2);
      await().atMost(READY).until(() -> live.observedFalsePositives().version() == 2);
      FalsePositiveObservation fresh = live.observedFalsePositives();
      assertThat(fresh.lookups()).isZero();
      assertThat(fresh.reported()).isZero();
      assertThat(fresh.rate()).isNaN();

      store.removeAll(present.subList(0, PRESENT / 2));
      lookUpAndReport(live, present, store, key -> true);
      FalsePositiveObservation stale = live.observedFalsePositives();
      assertThat(stale.version()).isEqualTo(2);
      // ~ (10,000 + 0.01 * 200,000) / (200,000 + 10,000): over 5%, against an expected 1%.
      assertThat(stale.rate()).isGreaterThan(2 * expected);

      // An outcome for a key the served version answers "definitely absent" is not this
      // version's: dropped.
      String absentNow =
          TestKeys.strings("never", 1_000).stream()
              .filter(key -> !live.mightContain(key))
              .findFirst()
              .orElseThrow();
      long reportedBefore = live.observedFalsePositives().reported();
      live.recordOutcome(absentNow, false);
      assertThat(live.observedFalsePositives().reported()).isEqualTo(reportedBefore);
    }
  }

  /**
   * Looks every present key and {@value #ABSENT} distinct absent keys up, and for each "maybe
   * present" answer picked by {@code report} tells the filter whether the store has the key.
   *
   * @return the false positives among the absent keys
   */
  private static long lookUpAndReport(
      LiveBloomFilter<String> live,
      List<String> present,
      Set<String> store,
      Predicate<String> report) {
    long falsePositives = 0;
    for (String key : present) {
      if (live.mightContain(key) && report.test(key)) {
        live.recordOutcome(key, store.contains(key));
      }
    }
    for (int i = 0; i < ABSENT; i++) {
      String key = "absent-" + i;
      if (live.mightContain(key)) {
        falsePositives++;
        if (report.test(key)) {
          live.recordOutcome(key, store.contains(key));
        }
      }
    }
    return falsePositives;
  }

  /**
   * Standard deviation of the rate estimate when {@code reported} of {@code maybePresent} answers
   * are reported: the binomial variance of the false positives among {@code absent} lookups, plus
   * the hypergeometric variance of the sample's false-positive count scaled up to all answers.
   */
  private static double sampledSigma(double p, long absent, long maybePresent, long reported) {
    double falsePositives = p * absent;
    double share = falsePositives / maybePresent;
    double binomial = absent * p * (1 - p);
    double sampling =
        (double) maybePresent
            * maybePresent
            / reported
            * share
            * (1 - share)
            * (1 - (double) reported / maybePresent);
    return Math.sqrt(binomial + sampling) / absent;
  }
}
