package io.bloomoperator.publish;

import io.bloomoperator.api.ByteSizes;
import io.bloomoperator.api.Reasons;
import java.io.IOException;

/**
 * A namespace's budget in an object store: what its objects hold there, listed from the store
 * itself (authoritative, and right after a crash too), plus what a publish would add, must stay
 * within the store's {@code namespaceBudgetBytes}.
 *
 * @param store the store's name, for the refusal's message
 * @param namespace the namespace
 * @param maxBytes what the namespace's objects may hold
 * @param used lists what they hold now
 */
public record StoreBudget(String store, String namespace, long maxBytes, StoredBytes used) {

  /** Bytes the namespace's objects hold in the store. */
  @FunctionalInterface
  public interface StoredBytes {
    long get() throws IOException;
  }

  /**
   * @throws PublishException {@link Reasons#STORE_BUDGET_EXCEEDED} if {@code adding} more bytes
   *     would exceed the budget, {@link Reasons#STORE_UNAVAILABLE} if the store cannot be listed
   */
  public void check(long adding) throws PublishException {
    long now;
    try {
      now = used.get();
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
}
