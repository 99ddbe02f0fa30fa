package io.bloomoperator.publish;

/**
 * A snapshot could not be published. Whatever the attempt created has been removed again, and the
 * previously published version is untouched.
 */
public class PublishException extends Exception {

  /** Ready-condition reason for a filter that exceeds the configured snapshot limits. */
  public static final String TOO_LARGE = "SnapshotTooLarge";
  /** Ready-condition reason for API failures while writing the snapshot. */
  public static final String FAILED = "PublishFailed";
  /** Ready-condition reason when another writer changed the manifest concurrently. */
  public static final String CONFLICT = "ManifestConflict";
  /** Ready-condition reason when manifests must be signed but the signing key is unusable. */
  public static final String SIGNING_KEY = "SigningKeyUnavailable";

  /** Ready-condition reason when the snapshot's ConfigMap names belong to someone else. */
  public static final String NAME_CONFLICT = "NameConflict";
  /** Ready-condition reason when the namespace's snapshots would exceed their byte budget. */
  public static final String NAMESPACE_QUOTA = "NamespaceQuotaExceeded";

  private final String reason;

  public PublishException(String reason, String message, Throwable cause) {
    super(message, cause);
    this.reason = reason;
  }

  /** The condition reason. */
  public String reason() {
    return reason;
  }
}
