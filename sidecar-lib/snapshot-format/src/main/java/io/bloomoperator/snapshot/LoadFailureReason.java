package io.bloomoperator.snapshot;

import java.io.IOException;
import java.util.Locale;

/**
 * Why a reader did not load a snapshot, in a fixed set of values: the reason of a {@link
 * SnapshotRefusedException} (the manifest was refused before anything was fetched) or of a failed
 * load, and what a reader counts and tags its load-failure metric with. A fixed set, not the
 * exception message, because messages may quote manifest content written by whoever can write the
 * ConfigMap. The one list of these reasons: a new refusal is added here and nowhere else.
 */
public enum LoadFailureReason {
  /** The API server did not answer or refused a request (typically a KubernetesClientException). */
  API(false),
  /**
   * A chunk ConfigMap had no chunk data, or not the announced amount of it (a chunk that does not
   * exist at all fails {@link #VERIFICATION}, like one whose digest is wrong).
   */
  CHUNK(false),
  /** The new filter did not fit in the heap beside the served one. */
  HEAP(false),
  /**
   * The object store holding the chunks refused the reader: no credentials found, wrong
   * credentials, or credentials without read access to the filter's objects (HTTP 401/403).
   */
  STORE_DENIED(false),
  /** The object store holding the chunks did not answer, or failed the request (not a refusal). */
  STORE_UNAVAILABLE(false),
  /**
   * A memory-mapped reader could not write the new version's file in its local snapshot directory:
   * not enough usable space, the directory missing or not writable, or an I/O error.
   */
  DISK(false),
  /** The manifest is unreadable, or a chunk failed its digest, size, header or key-type check. */
  VERIFICATION(false),
  /**
   * Refused: {@code totalBytes}, {@code numBits}, the chunk count or a chunk's size exceeds the
   * reader's limits.
   */
  TOO_LARGE(true),
  /** Refused: the manifest's {@code filterName} is not the filter being read. */
  WRONG_FILTER(true),
  /** Refused: a chunk name is not the canonical {@code <filter>-bloom-v<version>-<index>}. */
  FOREIGN_CHUNK(true),
  /** Refused: keys are trusted but the manifest carries no signature. */
  UNSIGNED(true),
  /** Refused: signed by a key that is not trusted. */
  UNTRUSTED_KEY(true),
  /**
   * Refused: the signature does not verify (the manifest was changed after signing, signed for
   * another namespace, or the signature data is malformed).
   */
  BAD_SIGNATURE(true),
  /** Refused: a signed manifest is not published after the served one. */
  ROLLBACK(true),
  /**
   * Refused: a signed manifest was created longer ago than the reader's maximum manifest age (a
   * replayed old version, or an operator that has not re-stamped an unchanged version).
   */
  TOO_OLD(true),
  /**
   * Refused: the manifest's chunks are in an object store ({@code store}) this reader has no
   * configuration for. Readers take a store's endpoint and credentials from their own
   * configuration, never from a manifest.
   */
  UNKNOWN_STORE(true);

  private final boolean refusal;

  LoadFailureReason(boolean refusal) {
    this.refusal = refusal;
  }

  /**
   * Whether this is the reason of a refusal: decided from the manifest alone, before anything was
   * fetched, and not retried until the manifest changes.
   */
  public boolean isRefusal() {
    return refusal;
  }

  /** The metric tag value: the constant's name in lower case, e.g. {@code bad_signature}. */
  public String tagValue() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * The reason for an exception a reader reports to its listeners: a refusal's own reason, {@link
   * #VERIFICATION} for any other verification failure, an {@link ObjectStoreException}'s own
   * reason, {@link #DISK} for a {@link LocalDiskException}, {@link #HEAP} or {@link #CHUNK} for any
   * other {@link IOException}. Anything unexpected counts as {@link #API}, the only other source of
   * failures.
   */
  public static LoadFailureReason of(Exception exception) {
    if (exception instanceof SnapshotRefusedException refused) {
      return refused.reason();
    }
    if (exception instanceof SnapshotVerificationException) {
      return VERIFICATION;
    }
    if (exception instanceof ObjectStoreException store) {
      return store.reason();
    }
    if (exception instanceof LocalDiskException) {
      return DISK;
    }
    if (exception instanceof IOException) {
      return exception.getCause() instanceof OutOfMemoryError ? HEAP : CHUNK;
    }
    return API;
  }
}
