package io.bloomoperator.snapshot;

/**
 * A manifest was refused before anything it names was fetched or allocated: it is well formed, but
 * this reader does not accept it (too large, a chunk name that is not the filter's own, a missing
 * or untrusted signature, an older version than the one served). A subclass of {@link
 * SnapshotVerificationException}, so code that handles verification failures handles these too;
 * {@link #reason()} tells them apart.
 */
public final class SnapshotRefusedException extends SnapshotVerificationException {

  private static final long serialVersionUID = 1L;

  private final LoadFailureReason reason;

  /**
   * A refusal for {@code reason}; {@code message} says what exactly was wrong.
   *
   * @throws IllegalArgumentException if {@code reason} is not a {@linkplain
   *     LoadFailureReason#isRefusal() refusal}
   */
  public SnapshotRefusedException(LoadFailureReason reason, String message) {
    super(message);
    if (!reason.isRefusal()) {
      throw new IllegalArgumentException(reason + " is not a refusal");
    }
    this.reason = reason;
  }

  /** Why the manifest was refused: a {@linkplain LoadFailureReason#isRefusal() refusal}. */
  public LoadFailureReason reason() {
    return reason;
  }
}
