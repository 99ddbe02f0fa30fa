package io.bloomoperator.snapshot;

import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.Signature;
import java.util.Base64;

/**
 * Signs manifests with one Ed25519 private key (see {@link ManifestSignature} for what is signed).
 */
public final class ManifestSigner {

  private final PrivateKey privateKey;
  private final String keyId;

  /**
   * A signer for {@code privateKey}.
   *
   * @throws IllegalArgumentException if the key is not an Ed25519 private key
   */
  public ManifestSigner(PrivateKey privateKey) {
    Ed25519Keys.requireEd25519(privateKey);
    this.privateKey = privateKey;
    this.keyId = Ed25519Keys.keyId(Ed25519Keys.publicKeyOf(privateKey));
  }

  /** The key id readers see in {@code manifest.sig}. */
  public String keyId() {
    return keyId;
  }

  /**
   * The signature of {@code manifestJson} (exactly the text stored) published in {@code namespace}.
   */
  public ManifestSignature sign(String namespace, String manifestJson) {
    try {
      Signature signature = Signature.getInstance(Ed25519Keys.ALGORITHM);
      signature.initSign(privateKey);
      signature.update(ManifestSignature.signedBytes(namespace, manifestJson));
      return new ManifestSignature(
          Ed25519Keys.ALGORITHM, keyId, Base64.getEncoder().encodeToString(signature.sign()));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("Ed25519 signing failed", e);
    }
  }
}
