package io.bloomoperator.snapshot;

import java.io.IOException;

/**
 * An object store holding a snapshot's chunks refused or failed a read: a failed load (retried),
 * told apart from a bad chunk so that readers and their metrics can say whether to look at the
 * reader's credentials ({@link LoadFailureReason#STORE_DENIED}) or at the store ({@link
 * LoadFailureReason#STORE_UNAVAILABLE}).
 */
public final class ObjectStoreException extends IOException {

  private static final long serialVersionUID = 1L;

  private final LoadFailureReason reason;

  /**
   * A store failure for {@code reason}; {@code message} names the store and the object, never
   * manifest content beyond the (already checked) key.
   *
   * @throws IllegalArgumentException if {@code reason} is not {@link
   *     LoadFailureReason#STORE_DENIED} or {@link LoadFailureReason#STORE_UNAVAILABLE}
   */
  public ObjectStoreException(LoadFailureReason reason, String message, Throwable cause) {
    super(message, cause);
    if (reason != LoadFailureReason.STORE_DENIED && reason != LoadFailureReason.STORE_UNAVAILABLE) {
      throw new IllegalArgumentException(reason + " is not an object-store failure");
    }
    this.reason = reason;
  }

  /** {@link LoadFailureReason#STORE_DENIED} or {@link LoadFailureReason#STORE_UNAVAILABLE}. */
  public LoadFailureReason reason() {
    return reason;
  }
}
