package io.bloomoperator.reconcile;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;

/**
 * The operator's own metrics beside java-operator-sdk's: how long builds and publishes take, how
 * big the results are, and why things fail. Exported as Prometheus text on /metrics ({@code
 * bloom_build_duration_seconds}, {@code bloom_published_total}, ...).
 */
public final class BuildMetrics {

  private final MeterRegistry registry;
  private final Timer buildDuration;
  private final Timer publishDuration;
  private final DistributionSummary keys;
  private final DistributionSummary snapshotBytes;
  private final Counter published;
  private final Counter unchanged;

  public BuildMetrics(MeterRegistry registry) {
    this.registry = registry;
    this.buildDuration =
        Timer.builder("bloom.build.duration")
            .description("Reading the source and building the filter")
            .register(registry);
    this.publishDuration =
        Timer.builder("bloom.publish.duration")
            .description("Writing the chunks and the manifest of a new version")
            .register(registry);
    this.keys =
        DistributionSummary.builder("bloom.build.keys")
            .description("Keys per build")
            .register(registry);
    this.snapshotBytes =
        DistributionSummary.builder("bloom.snapshot.bytes")
            .baseUnit("bytes")
            .description("Size of published snapshots")
            .register(registry);
    this.published =
        Counter.builder("bloom.published")
            .description("New snapshot versions published")
            .register(registry);
    this.unchanged =
        Counter.builder("bloom.rebuilds.unchanged")
            .description("Rebuilds whose payload equalled the published one")
            .register(registry);
  }

  /** Metrics that go nowhere, for tests and embedded use. */
  public static BuildMetrics discarding() {
    return new BuildMetrics(new SimpleMeterRegistry());
  }

  void built(long keyCount, Duration took) {
    keys.record(keyCount);
    buildDuration.record(took);
  }

  void published(long bytes, Duration took) {
    published.increment();
    snapshotBytes.record(bytes);
    publishDuration.record(took);
  }

  void unchanged() {
    unchanged.increment();
  }

  void failed(String reason) {
    Counter.builder("bloom.failures")
        .description("Failed reconciles by Ready reason")
        .tag("reason", reason)
        .register(registry)
        .increment();
  }
}
