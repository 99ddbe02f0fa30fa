package io.bloomoperator.publish;

import java.io.IOException;

/**
 * An object store did not answer, or refused the operator. The message names only the store: the
 * server's own text (which may carry the endpoint, the bucket or a request id) goes to the log.
 */
public final class StoreUnavailableException extends IOException {

  private final String store;

  public StoreUnavailableException(String store, Throwable cause) {
    this(store, null, cause);
  }

  /**
   * @param why a fixed text saying why (e.g. the TLS handshake failed), or null
   */
  public StoreUnavailableException(String store, String why, Throwable cause) {
    super("object store " + store + " is unavailable" + (why == null ? "" : ": " + why), cause);
    this.store = store;
  }

  /** The store failure {@code e} is or was caused by, if any. */
  public static java.util.Optional<StoreUnavailableException> in(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof StoreUnavailableException store) {
        return java.util.Optional.of(store);
      }
    }
    return java.util.Optional.empty();
  }

  /** The store's name. */
  public String store() {
    return store;
  }
}
