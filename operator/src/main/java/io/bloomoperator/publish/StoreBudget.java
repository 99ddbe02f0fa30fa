package io.bloomoperator.publish;

import io.bloomoperator.api.ByteSizes;
import io.bloomoperator.api.Reasons;
import java.io.IOException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Optional;

/**
 * A namespace's budgets in an object store: what its objects hold there, listed from the store
 * itself (authoritative, and right after a crash too), plus what a publish would add, must stay
 * within the store's {@code namespaceBudgetBytes}; and what its filters upload to object stores in
 * any hour must stay within {@code BLOOM_STORE_NAMESPACE_UPLOAD_BYTES_PER_HOUR} (bandwidth and
 * request cost of a shared bucket, which stored bytes do not bound: old versions leave after their
 * grace period, so a filter that uploads a whole base at every publish stays under the first).
 *
 * @param store the store's name, for the refusal's message
 * @param namespace the namespace
 * @param maxBytes what the namespace's objects may hold
 * @param used lists what they hold now
 * @param uploads bytes uploaded per namespace in the last hour, operator-wide (its namespace limit
 *     is the upload budget; the filter limit is the same, so only the namespace's counts)
 * @param reservations bytes of publishes in progress, operator-wide ({@link #reserve})
 */
public record StoreBudget(
    String store,
    String namespace,
    long maxBytes,
    StoredBytes used,
    WriteBudget uploads,
    StoreReservations reservations) {

  /** Bytes the namespace's objects hold in the store. */
  @FunctionalInterface
  public interface StoredBytes {
    long get() throws IOException;
  }

  /** The upload budget of {@code bytesPerHour} per namespace, for every store of the operator. */
  public static WriteBudget uploadBudget(long bytesPerHour) {
    return new WriteBudget(
        new WriteBudget.Limits(
            bytesPerHour, bytesPerHour, WriteBudget.Limits.DEFAULT_MAX_CHUNKS_PER_VERSION));
  }

  /**
   * Checks that {@code adding} more bytes fit beside what the namespace's objects hold and what its
   * other publishes in progress reserved, and reserves them, in one step: the caller uploads, then
   * closes the reservation (its objects are then listed with the others).
   *
   * @throws PublishException {@link Reasons#STORE_BUDGET_EXCEEDED} if {@code adding} more bytes
   *     would exceed the budget, {@link Reasons#STORE_UNAVAILABLE} if the store cannot be listed;
   *     nothing is reserved then
   */
  public StoreReservations.Reservation reserve(long adding) throws PublishException {
    String key = store + "/" + namespace;
    synchronized (reservations.lock(key)) {
      check(adding, reservations.reserved(key));
      return reservations.reserve(key, adding);
    }
  }

  private void check(long adding, long reserved) throws PublishException {
    long now;
    try {
      now = used.get() + reserved;
    } catch (IOException e) {
      throw new PublishException(
          Reasons.STORE_UNAVAILABLE,
          "object store " + store + " is unavailable; nothing was published",
          null);
    }
    if (now + adding > maxBytes) {
      throw new PublishException(
          Reasons.STORE_BUDGET_EXCEEDED,
          "publishing "
              + ByteSizes.human(adding)
              + " would take the objects of namespace "
              + namespace
              + " in store "
              + store
              + " to "
              + ByteSizes.human(now + adding)
              + ", over its budget of "
              + ByteSizes.human(maxBytes)
              + " (namespaceBudgetBytes); nothing was published",
          null);
    }
  }

  /**
   * Charges an upload of {@code bytes} (by {@code filter}) to the namespace's upload budget before
   * anything is uploaded: an upload that fails half-way has used bandwidth too.
   *
   * @throws PublishException {@link Reasons#STORE_UPLOAD_BUDGET_EXCEEDED} when it does not fit;
   *     nothing is charged then
   */
  public void chargeUpload(String filter, long bytes, Instant now) throws PublishException {
    Optional<WriteBudget.Refusal> refused = uploads.charge(namespace, filter, bytes, now);
    if (refused.isPresent()) {
      throw refusal(refused.get(), "uploading " + ByteSizes.human(bytes) + " would exceed");
    }
  }

  /**
   * The refusal to expect while the namespace has used up its upload budget, or empty: a build is
   * not started while nothing it publishes could be uploaded.
   */
  public Optional<PublishException> uploadsExhausted(String filter, Instant now) {
    return uploads.exhausted(namespace, filter, now).map(r -> refusal(r, "nothing more fits in"));
  }

  private PublishException refusal(WriteBudget.Refusal refusal, String what) {
    return WriteBudgetExceeded.uploads(
        what
            + " the upload budget of namespace "
            + namespace
            + " in object stores, "
            + ByteSizes.human(refusal.limit())
            + " per hour (BLOOM_STORE_NAMESPACE_UPLOAD_BYTES_PER_HOUR; "
            + ByteSizes.human(refusal.used())
            + " uploaded in the last hour); "
            + (refusal.fitsAt() == null
                ? "a version this large never fits: ask the administrator to raise the limit"
                : "the next publish is possible at "
                    + refusal.fitsAt().truncatedTo(ChronoUnit.SECONDS))
            + "; nothing was published, the published version keeps serving",
        refusal.fitsAt());
  }
}
