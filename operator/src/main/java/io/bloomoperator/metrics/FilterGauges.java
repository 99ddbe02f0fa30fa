package io.bloomoperator.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The series of one BloomFilter (tags namespace and filter), its gauges and its duration
 * histograms: each registered when first set or recorded, a gauge removed when set to null, all
 * removed together when the filter is deleted. A closed instance ignores further values, so a
 * reconcile that ends after the deletion registers nothing.
 */
public final class FilterGauges {

  private final MeterRegistry registry;
  private final Tags tags;
  private final Map<Metric, Value> values = new HashMap<>();
  private final Map<Metric, Timer> timers = new HashMap<>();
  private boolean closed;

  FilterGauges(MeterRegistry registry, String namespace, String name) {
    this.registry = registry;
    this.tags = Tags.of(MetricCatalogue.TAG_NAMESPACE, namespace, MetricCatalogue.TAG_FILTER, name);
  }

  /** An instance that registers nothing, for a filter already deleted. */
  static FilterGauges detached(MeterRegistry registry) {
    FilterGauges gauges = new FilterGauges(registry, "", "");
    gauges.closed = true;
    return gauges;
  }

  /** Sets {@code metric} to {@code value}; null removes its series. */
  synchronized void set(Metric metric, Double value) {
    if (closed) {
      return;
    }
    Value current = values.get(metric);
    if (value == null) {
      if (current != null) {
        registry.remove(current.gauge);
        values.remove(metric);
      }
      return;
    }
    if (current == null) {
      current = new Value();
      current.gauge =
          Gauge.builder(metric.name(), current, v -> v.value)
              .baseUnit(metric.unit())
              .description(metric.meaning())
              .tags(tags)
              .strongReference(true)
              .register(registry);
      values.put(metric, current);
    }
    current.value = value;
  }

  /** Records one duration in the histogram {@code metric}, registering it at its first value. */
  synchronized void record(Metric metric, Duration took) {
    if (closed) {
      return;
    }
    timers
        .computeIfAbsent(
            metric,
            m ->
                Timer.builder(m.name())
                    .description(m.meaning())
                    .tags(tags)
                    .serviceLevelObjectives(
                        MetricCatalogue.durationBuckets(m).toArray(Duration[]::new))
                    .register(registry))
        .record(took);
  }

  /** Removes every series and ignores later values. */
  synchronized void removeAll() {
    closed = true;
    values.values().forEach(v -> registry.remove(v.gauge));
    values.clear();
    timers.values().forEach(registry::remove);
    timers.clear();
  }

  private static final class Value {
    volatile double value;
    Gauge gauge;
  }
}
