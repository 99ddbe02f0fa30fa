package io.bloomoperator.faults;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The soak's flatness judgement ({@link Trend}) on made-up series: it must pass what a healthy
 * process looks like and fail the leaks the soak is there to catch, at the soak's tolerances.
 */
class TrendTest {

  /** 30 minutes sampled every 10 s, a source change every 2 s: 5 refreshes per sample. */
  private static final int SAMPLES = 180;

  private static final int REFRESHES_PER_SAMPLE = 5;

  @Test
  void aConstantFigureWithNoiseAndSpikesIsFlat() {
    Trend watches = new Trend("watches");
    for (int i = 0; i < SAMPLES; i++) {
      // 18 watches, one more now and then while a reader re-lists, a burst in the last quarter.
      watches.add(i * 10, 18 + (i % 7 == 0 ? 1 : 0) + (i == SAMPLES - 3 ? 10 : 0));
    }
    assertThat(watches.notFlat(2, 0)).isEmpty();
    assertThat(watches.growth()).isZero();
  }

  @Test
  void oneLeakedWatchPerRefreshIsNotFlat() {
    Trend watches = new Trend("watches");
    for (int i = 0; i < SAMPLES; i++) {
      watches.add(i * 10, 18 + i * REFRESHES_PER_SAMPLE);
    }
    assertThat(watches.notFlat(2, 0)).get().asString().contains("watches grew by");
    assertThat(watches.slopePerHour()).isEqualTo(1_800.0, org.assertj.core.data.Offset.offset(1.0));
  }

  @Test
  void evenOneLeakedWatchInTwentyRefreshesOfAThreeMinuteRunIsNotFlat() {
    Trend watches = new Trend("watches");
    for (int i = 0; i < 18; i++) {
      watches.add(i * 10, 18 + (i * REFRESHES_PER_SAMPLE) / 20);
    }
    assertThat(watches.notFlat(2, 0)).isPresent();
  }

  @Test
  void aHeapGrowingTwentyFiveKibPerRefreshOverHalfAnHourIsNotFlat() {
    Trend heap = new Trend("heap");
    double mib = 1024 * 1024;
    for (int i = 0; i < SAMPLES; i++) {
      heap.add(i * 10, 40 * mib + i * REFRESHES_PER_SAMPLE * 25 * 1024 + (i % 2) * 2 * mib);
    }
    assertThat(heap.notFlat(8 * mib, 0.10)).isPresent();
  }

  @Test
  void tooFewSamplesAreNotJudgedFlat() {
    Trend threads = new Trend("threads");
    for (int i = 0; i < 7; i++) {
      threads.add(i, 30);
    }
    assertThat(threads.notFlat(3, 0)).get().asString().contains("only 7 samples");
  }

  @Test
  void apiServerWatchesAreCountedByResource() {
    ApiServerWatches.Counts counts =
        ApiServerWatches.parse(
            """
            # TYPE apiserver_longrunning_requests gauge
            apiserver_longrunning_requests{component="apiserver",group="",resource="configmaps",scope="namespace",subresource="",verb="WATCH",version="v1"} 12
            apiserver_longrunning_requests{component="apiserver",group="",resource="configmaps",scope="cluster",subresource="",verb="WATCH",version="v1"} 1
            apiserver_longrunning_requests{component="apiserver",group="bloomoperator.io",resource="bloomfilters",scope="namespace",subresource="",verb="WATCH",version="v1alpha1"} 1
            apiserver_longrunning_requests{component="apiserver",group="",resource="pods",scope="namespace",subresource="log",verb="CONNECT",version="v1"} 4
            apiserver_longrunning_requests_other{verb="WATCH",resource="configmaps"} 99
            """);
    assertThat(counts.byResource())
        .containsEntry("configmaps", 13L)
        .containsEntry("bloomfilters", 1L);
    assertThat(counts.watches()).isEqualTo(14);
  }
}
