package io.bloomoperator.watch;

import io.bloomoperator.snapshot.SnapshotRefusedException;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import java.io.IOException;
import java.util.Locale;

/**
 * Why a snapshot could not be loaded, in a fixed set of values: what {@link
 * LiveBloomFilter#failures(LoadFailureReason)} counts and the {@code reason} tag of the load
 * failure metric carries. A fixed set, not the exception message, because messages may quote
 * manifest content written by whoever can write the ConfigMap.
 */
public enum LoadFailureReason {
  /** The API server did not answer or refused a request (typically a KubernetesClientException). */
  API,
  /** A chunk ConfigMap was missing, empty or shorter or longer than announced. */
  CHUNK,
  /** The new filter did not fit in the heap beside the served one. */
  HEAP,
  /** The manifest is unreadable, or a chunk failed its digest, size, header or key-type check. */
  VERIFICATION,
  /**
   * Refused: the snapshot exceeds the reader's limits ({@link SnapshotRefusedException.Reason}).
   */
  TOO_LARGE,
  /** Refused: the manifest is another filter's. */
  WRONG_FILTER,
  /** Refused: the manifest names a chunk that is not the filter's own. */
  FOREIGN_CHUNK,
  /** Refused: keys are trusted but the manifest is not signed. */
  UNSIGNED,
  /** Refused: signed by a key that is not trusted. */
  UNTRUSTED_KEY,
  /** Refused: the signature does not verify. */
  BAD_SIGNATURE,
  /** Refused: a signed manifest is not newer than the served one. */
  ROLLBACK,
  /** Refused: a signed manifest is older than the reader's maximum manifest age. */
  TOO_OLD;

  /** The metric tag value: the constant's name in lower case, e.g. {@code bad_signature}. */
  public String tagValue() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * The reason for an exception reported to {@link BloomFilterListener#onFailure}; see there for
   * what each type means. Anything unexpected counts as {@link #API}, the only other source of
   * failures.
   */
  public static LoadFailureReason of(Exception exception) {
    if (exception instanceof SnapshotRefusedException refused) {
      return valueOf(refused.reason().name());
    }
    if (exception instanceof SnapshotVerificationException) {
      return VERIFICATION;
    }
    if (exception instanceof IOException) {
      return exception.getCause() instanceof OutOfMemoryError ? HEAP : CHUNK;
    }
    return API;
  }
}
