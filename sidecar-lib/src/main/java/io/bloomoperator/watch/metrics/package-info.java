/**
 * Micrometer metrics of {@link io.bloomoperator.watch.LiveBloomFilter}: the binder {@link
 * io.bloomoperator.watch.metrics.LiveBloomFilterMetrics} and the catalogue of metric names {@link
 * io.bloomoperator.watch.metrics.ReaderMetricNames}. Micrometer is an optional dependency of
 * sidecar-lib: only this package needs it, and nothing outside it refers to the binder.
 */
package io.bloomoperator.watch.metrics;
