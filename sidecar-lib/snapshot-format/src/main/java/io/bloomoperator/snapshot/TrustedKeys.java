package io.bloomoperator.snapshot;

import java.security.GeneralSecurityException;
import java.security.PublicKey;
import java.security.Signature;
import java.util.Base64;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The Ed25519 public keys whose manifest signatures a reader accepts. Several keys can be trusted
 * at once, so a key can be rotated without a moment in which readers refuse the operator's
 * manifests.
 */
public final class TrustedKeys {

  private static final TrustedKeys NONE = new TrustedKeys(Map.of());

  private final Map<String, PublicKey> byKeyId;

  private TrustedKeys(Map<String, PublicKey> byKeyId) {
    this.byKeyId = Map.copyOf(byKeyId);
  }

  /** No trusted key: signatures are not required (and not checked). */
  public static TrustedKeys none() {
    return NONE;
  }

  /**
   * Trusts {@code keys}.
   *
   * @throws IllegalArgumentException if a key is not an Ed25519 public key
   */
  public static TrustedKeys of(Collection<PublicKey> keys) {
    Map<String, PublicKey> byKeyId = new LinkedHashMap<>();
    for (PublicKey key : keys) {
      byKeyId.put(Ed25519Keys.keyId(key), key);
    }
    return new TrustedKeys(byKeyId);
  }

  /** Whether no key is trusted, i.e. manifests need no signature. */
  public boolean isEmpty() {
    return byKeyId.isEmpty();
  }

  /** Key ids of the trusted keys. */
  public Set<String> keyIds() {
    return byKeyId.keySet();
  }

  /**
   * Checks that {@code manifestJson}, read from namespace {@code namespace}, carries a valid
   * signature by a trusted key. Does nothing when no key is trusted.
   *
   * @param signatureData the manifest ConfigMap's {@code manifest.sig}, or null if it has none
   * @return the key id that signed it, or null when no key is trusted
   * @throws SnapshotRefusedException with reason {@link LoadFailureReason#UNSIGNED} if there is no
   *     signature, {@link LoadFailureReason#UNTRUSTED_KEY} if its key is not trusted, {@link
   *     LoadFailureReason#BAD_SIGNATURE} if it is malformed or does not verify (changed manifest,
   *     other namespace)
   */
  public String verify(String namespace, String manifestJson, String signatureData)
      throws SnapshotRefusedException {
    if (isEmpty()) {
      return null;
    }
    if (signatureData == null) {
      throw new SnapshotRefusedException(
          LoadFailureReason.UNSIGNED,
          "manifest in namespace "
              + namespace
              + " is not signed, and this reader only accepts manifests signed by key(s) "
              + byKeyId.keySet());
    }
    ManifestSignature signature = ManifestSignature.fromData(signatureData);
    PublicKey key = byKeyId.get(signature.keyId());
    if (key == null) {
      throw new SnapshotRefusedException(
          LoadFailureReason.UNTRUSTED_KEY,
          "manifest in namespace "
              + namespace
              + " is signed by key '"
              + signature.keyId()
              + "', which is not among the trusted "
              + byKeyId.keySet());
    }
    boolean valid;
    try {
      byte[] bytes = Base64.getDecoder().decode(signature.signature());
      Signature verifier = Signature.getInstance(Ed25519Keys.ALGORITHM);
      verifier.initVerify(key);
      verifier.update(ManifestSignature.signedBytes(namespace, manifestJson));
      valid = verifier.verify(bytes);
    } catch (IllegalArgumentException | GeneralSecurityException e) {
      valid = false;
    }
    if (!valid) {
      throw new SnapshotRefusedException(
          LoadFailureReason.BAD_SIGNATURE,
          "signature of the manifest in "
              + "namespace "
              + namespace
              + " by key '"
              + signature.keyId()
              + "' does not verify: "
              + "the manifest was changed after signing or signed for another namespace");
    }
    return signature.keyId();
  }
}
