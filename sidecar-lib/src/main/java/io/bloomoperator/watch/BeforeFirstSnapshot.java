package io.bloomoperator.watch;

/**
 * What {@link LiveBloomFilter#mightContain} answers while no verified snapshot has been loaded yet.
 */
public enum BeforeFirstSnapshot {

  /**
   * Answer {@code true} ("maybe present"): callers fall through to their cache or database, so a
   * missing filter costs load but never wrong answers. The default.
   */
  FAIL_OPEN,

  /**
   * Answer {@code false} ("definitely absent"): for callers that would rather reject than hit the
   * backend before the filter is known. Wrong for keys that exist, so pair it with a readiness
   * probe on {@link LiveBloomFilter#isReady()}.
   */
  FAIL_CLOSED
}
