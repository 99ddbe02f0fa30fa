package io.bloomoperator.changes;

import java.time.Instant;

/**
 * What asking a filter's stream came to: its answer, a deferral (the stream was not asked now) or a
 * failure. Closing a {@link Done} gives back the heap it reserved: close it once its keys are
 * published or dropped.
 *
 * @param <T> the answer: a {@link ChangeStream.Batch} or a {@link StreamPosition}
 */
public sealed interface StreamRead<T> extends AutoCloseable {

  /** Why a stream was not asked now; each is counted, none is a failure. */
  enum Deferral {
    /** The stream failed lately and is left alone until its backoff ends. */
    BACKOFF,
    /** The namespace has its share of reads under way (BLOOM_STREAM_READS_PER_NAMESPACE). */
    READS,
    /** Too little of the read heap is free (BLOOM_STREAM_READ_BYTES, its namespace share). */
    BYTES,
    /**
     * The last publish was refused by the write budget: nothing is read before it has room again,
     * since what is read could not be published.
     */
    WRITE_BUDGET;

    /** As a metric tag value. */
    public String tag() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  @Override
  default void close() {}

  /**
   * The stream answered.
   *
   * @param recovered whether it had been failing until now
   * @param grant the heap reserved for the answer, or null when it reserved none
   */
  record Done<T>(T value, boolean recovered, StreamReadBudget.Grant grant)
      implements StreamRead<T> {
    @Override
    public void close() {
      if (grant != null) {
        grant.close();
      }
    }
  }

  /**
   * The stream was not asked now.
   *
   * @param until when it may be asked again, when known (a backoff); null: the next reconcile
   */
  record Deferred<T>(Deferral reason, Instant until) implements StreamRead<T> {}

  /**
   * The stream failed.
   *
   * @param backoff the failures in a row and the backoff they started; null for a lost position,
   *     which a full build (not waiting) resolves
   */
  record Failed<T>(StreamException error, StreamBackoff.Failure backoff) implements StreamRead<T> {

    /** Whether users should hear of it: the first failure (of its kind) after the stream worked. */
    public boolean news() {
      return backoff == null || backoff.firstOfItsKind();
    }

    /** The failure as {@code status.stream.message}: its reason, and when it is tried again. */
    public String message() {
      if (backoff == null) {
        return error.getMessage();
      }
      return error.getMessage()
          + "; read again after "
          + backoff.retryAt().truncatedTo(java.time.temporal.ChronoUnit.SECONDS)
          + " ("
          + backoff.inARow()
          + (backoff.inARow() == 1 ? " failure)" : " failures in a row)");
    }
  }
}
