package io.bloomoperator.api;

/**
 * On-demand rebuilds: setting the annotation {@value #ANNOTATION} to a new value (e.g. a timestamp)
 * makes the operator rebuild from the source even when the source says it is unchanged. The value
 * last acted on is kept in {@code status.rebuildRequest}.
 */
public final class RebuildRequest {

  public static final String ANNOTATION = "bloomoperator.io/rebuild";

  /** The annotation's value, or null. */
  public static String of(BloomFilter filter) {
    var annotations = filter.getMetadata().getAnnotations();
    return annotations == null ? null : annotations.get(ANNOTATION);
  }

  /** True when the resource carries a rebuild request that has not been acted on yet. */
  public static boolean pending(BloomFilter filter) {
    String requested = of(filter);
    return requested != null
        && (filter.getStatus() == null
            || !requested.equals(filter.getStatus().getRebuildRequest()));
  }

  private RebuildRequest() {}
}
