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

  /** Why a manifest was refused. */
  public enum Reason {
    /**
     * {@code totalBytes}, {@code numBits}, the chunk count or a chunk's size exceeds the limits.
     */
    TOO_LARGE,
    /** The manifest's {@code filterName} is not the filter being read. */
    WRONG_FILTER,
    /** A chunk name is not the canonical {@code <filter>-bloom-v<version>-<index>}. */
    FOREIGN_CHUNK,
    /** Trusted keys are configured but the manifest carries no signature. */
    UNSIGNED,
    /** The manifest is signed by a key that is not trusted. */
    UNTRUSTED_KEY,
    /**
     * The signature does not verify: the manifest was changed after signing, signed for another
     * namespace, or the signature data is malformed.
     */
    BAD_SIGNATURE,
    /** A signed manifest announces a version not newer than the one served. */
    ROLLBACK,
    /**
     * A signed manifest was created longer ago than the reader's maximum manifest age: a replayed
     * old version, or an operator that has not re-stamped an unchanged version.
     */
    TOO_OLD
  }

  private final Reason reason;

  /** A refusal for {@code reason}; {@code message} says what exactly was wrong. */
  public SnapshotRefusedException(Reason reason, String message) {
    super(message);
    this.reason = reason;
  }

  /** Why the manifest was refused. */
  public Reason reason() {
    return reason;
  }
}
