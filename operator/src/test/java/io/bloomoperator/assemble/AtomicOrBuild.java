package io.bloomoperator.assemble;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.source.KeySource;
import io.bloomoperator.source.SourceException;

/**
 * The split-block build as it was before block ranges (commit 2c1f903): the reader writes plainly
 * until its first hand-over, then every thread sets bits with the builder's atomic ORs ({@link
 * BloomFilterBits.Builder#concurrent()}). Kept for benchmarks, so that the build before and after
 * run side by side in one JVM on the same keys.
 */
public final class AtomicOrBuild {

  private AtomicOrBuild() {}

  /**
   * Fills a split-block filter sized as {@link FilterBuilder} sizes one for {@code request} and
   * {@code keys}, on {@code workers}; returns the bits.
   */
  public static BloomFilterBits build(
      KeySource source, FilterBuilder.Request request, long keys, BuildWorkers workers)
      throws SourceException {
    BloomFilterBits.Builder builder =
        SplitBlockGeometry.builder(request.keyType(), FilterBuilder.geometry(request, keys));
    try (ParallelFill fill =
        new ParallelFill(
            request.keyType(),
            request.maxMalformed(),
            () -> new ParallelFill.Inserters(builder, builder.concurrent()),
            workers,
            k -> {})) {
      source.readKeys(fill);
      fill.finish();
    }
    return builder.build();
  }
}
