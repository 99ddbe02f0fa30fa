package io.bloomoperator.snapshot;

/**
 * A snapshot (manifest or chunk) failed verification: wrong size, wrong digest, a header that
 * disagrees with the manifest, a malformed manifest, a key type other than the reader's. Checked on
 * purpose: readers must decide to keep serving the previous filter rather than let a corrupt one
 * through.
 *
 * <p>Applications meet it in sidecar-lib's {@code BloomFilterListener.onFailure} (a module
 * downstream of this one, so not linked): a {@code LiveBloomFilter} never serves a snapshot that
 * raised it, and never throws it from a lookup. Tools that decode snapshots themselves get it from
 * {@link SnapshotDecoder}. The subclass {@link SnapshotRefusedException} marks a manifest refused
 * by policy (limits, signatures) rather than found corrupt.
 */
public class SnapshotVerificationException extends Exception {

  private static final long serialVersionUID = 1L;

  private final int chunkIndex;

  /** A failure not tied to one chunk (manifest, header, totals). */
  public SnapshotVerificationException(String message) {
    this(message, -1, null);
  }

  /** A failure not tied to one chunk, with its cause. */
  public SnapshotVerificationException(String message, Throwable cause) {
    this(message, -1, cause);
  }

  /** A failure in chunk {@code chunkIndex} (0-based). */
  public SnapshotVerificationException(String message, int chunkIndex) {
    this(message, chunkIndex, null);
  }

  private SnapshotVerificationException(String message, int chunkIndex, Throwable cause) {
    super(printable(message), cause);
    this.chunkIndex = chunkIndex;
  }

  /** Longest message kept: messages quote manifest fields, which whoever wrote it chose. */
  static final int MAX_MESSAGE_CHARS = 1024;

  /**
   * The message as it may reach logs, listeners and health details: messages quote values from a
   * manifest (its filter name, format, chunk names), written by whoever may write ConfigMaps in the
   * namespace, so control characters (forged log lines) become '?' and the length is capped.
   */
  private static String printable(String message) {
    if (message == null) {
      return null;
    }
    StringBuilder out = new StringBuilder(Math.min(message.length(), MAX_MESSAGE_CHARS + 16));
    for (int i = 0; i < message.length() && out.length() < MAX_MESSAGE_CHARS; i++) {
      char c = message.charAt(i);
      out.append(Character.isISOControl(c) ? '?' : c);
    }
    if (message.length() > MAX_MESSAGE_CHARS) {
      out.append("... (cut)");
    }
    return out.toString();
  }

  /** The 0-based index of the offending chunk, or -1 if the failure is not about one chunk. */
  public int chunkIndex() {
    return chunkIndex;
  }
}
