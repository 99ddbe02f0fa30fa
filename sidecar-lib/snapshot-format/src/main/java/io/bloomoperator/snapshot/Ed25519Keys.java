package io.bloomoperator.snapshot;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.InvalidKeyException;
import java.security.Key;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.interfaces.EdECPrivateKey;
import java.security.spec.NamedParameterSpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import java.util.HexFormat;

/**
 * Ed25519 keys for manifest signatures, in the PEM forms {@code openssl} uses: PKCS#8 ({@code
 * -----BEGIN PRIVATE KEY-----}, what {@code openssl genpkey -algorithm ed25519} writes) and X.509
 * SubjectPublicKeyInfo ({@code -----BEGIN PUBLIC KEY-----}, {@code openssl pkey -pubout}). Only the
 * JDK's own Ed25519 provider is used.
 */
public final class Ed25519Keys {

  /** The JCA name of the algorithm. */
  public static final String ALGORITHM = "Ed25519";

  private static final String PRIVATE_LABEL = "PRIVATE KEY";
  private static final String PUBLIC_LABEL = "PUBLIC KEY";
  private static final int KEY_ID_BYTES = 8;

  private Ed25519Keys() {}

  /** A new random key pair. */
  public static KeyPair generate() {
    try {
      return KeyPairGenerator.getInstance(ALGORITHM).generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("Ed25519 is part of every Java 15+ runtime", e);
    }
  }

  /**
   * The key id of {@code key}: 16 lower-case hex digits of the SHA-256 of its X.509 encoding.
   * Readers compute it from the public keys they trust, so it needs no configuration of its own.
   *
   * @throws IllegalArgumentException if {@code key} is not an Ed25519 public key
   */
  public static String keyId(PublicKey key) {
    requireEd25519(key);
    byte[] digest = Sha256.newDigest().digest(key.getEncoded());
    return HexFormat.of().formatHex(digest, 0, KEY_ID_BYTES);
  }

  /**
   * The public key of {@code privateKey}. The JDK has no API for this, so the private key's seed is
   * fed to the key pair generator as its only randomness; the result is then checked by signing and
   * verifying, so a runtime that generated keys differently would fail here, not sign wrongly.
   *
   * @throws IllegalArgumentException if {@code privateKey} is not an Ed25519 private key with a
   *     seed
   */
  public static PublicKey publicKeyOf(PrivateKey privateKey) {
    requireEd25519(privateKey);
    byte[] seed =
        ((EdECPrivateKey) privateKey)
            .getBytes()
            .orElseThrow(() -> new IllegalArgumentException("the Ed25519 private key has no seed"));
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance(ALGORITHM);
      generator.initialize(NamedParameterSpec.ED25519, new SeedRandom(seed));
      KeyPair pair = generator.generateKeyPair();
      byte[] probe = "bloom-operator key check".getBytes(StandardCharsets.US_ASCII);
      Signature signer = Signature.getInstance(ALGORITHM);
      signer.initSign(privateKey);
      signer.update(probe);
      byte[] signature = signer.sign();
      Signature verifier = Signature.getInstance(ALGORITHM);
      verifier.initVerify(pair.getPublic());
      verifier.update(probe);
      if (!verifier.verify(signature)) {
        throw new IllegalStateException("could not derive the Ed25519 public key on this runtime");
      }
      return pair.getPublic();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("Ed25519 is part of every Java 15+ runtime", e);
    }
  }

  /**
   * Reads a PKCS#8 PEM Ed25519 private key.
   *
   * @throws InvalidKeyException if the text holds no PRIVATE KEY block or not an Ed25519 key
   */
  public static PrivateKey readPrivateKey(String pem) throws InvalidKeyException {
    try {
      Key key =
          KeyFactory.getInstance(ALGORITHM)
              .generatePrivate(new PKCS8EncodedKeySpec(der(pem, PRIVATE_LABEL)));
      return (PrivateKey) key;
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      throw new InvalidKeyException("not a PKCS#8 Ed25519 private key", e);
    }
  }

  /**
   * Reads an X.509 (SubjectPublicKeyInfo) PEM Ed25519 public key.
   *
   * @throws InvalidKeyException if the text holds no PUBLIC KEY block or not an Ed25519 key
   */
  public static PublicKey readPublicKey(String pem) throws InvalidKeyException {
    try {
      return KeyFactory.getInstance(ALGORITHM)
          .generatePublic(new X509EncodedKeySpec(der(pem, PUBLIC_LABEL)));
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      throw new InvalidKeyException("not an X.509 Ed25519 public key", e);
    }
  }

  /** PEM text of a private key (PKCS#8) or public key (X.509), 64 characters a line. */
  public static String toPem(Key key) {
    requireEd25519(key);
    String label = key instanceof PrivateKey ? PRIVATE_LABEL : PUBLIC_LABEL;
    return "-----BEGIN "
        + label
        + "-----\n"
        + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(key.getEncoded())
        + "\n-----END "
        + label
        + "-----\n";
  }

  static void requireEd25519(Key key) {
    if (key == null) {
      throw new IllegalArgumentException("key must not be null");
    }
    // EdDSA keys of the JDK report "EdDSA"; the curve is in their parameters.
    boolean edDsa = "EdDSA".equals(key.getAlgorithm()) || ALGORITHM.equals(key.getAlgorithm());
    String curve =
        key instanceof java.security.interfaces.EdECKey ed ? ed.getParams().getName() : "";
    if (!edDsa || !ALGORITHM.equalsIgnoreCase(curve)) {
      throw new IllegalArgumentException(
          "expected an Ed25519 key, got "
              + key.getAlgorithm()
              + (curve.isEmpty() ? "" : " (" + curve + ")"));
    }
  }

  private static byte[] der(String pem, String label) {
    String begin = "-----BEGIN " + label + "-----";
    String end = "-----END " + label + "-----";
    int from = pem.indexOf(begin);
    int to = from < 0 ? -1 : pem.indexOf(end, from);
    if (from < 0 || to < 0) {
      throw new IllegalArgumentException("no " + label + " PEM block");
    }
    return Base64.getMimeDecoder().decode(pem.substring(from + begin.length(), to));
  }

  /** Hands out exactly the seed: the Ed25519 generator draws its 32-byte private key from here. */
  private static final class SeedRandom extends SecureRandom {
    private static final long serialVersionUID = 1L;
    private final byte[] seed;

    SeedRandom(byte[] seed) {
      this.seed = seed.clone();
    }

    @Override
    public void nextBytes(byte[] bytes) {
      if (bytes.length != seed.length) {
        throw new IllegalStateException("unexpected request for " + bytes.length + " random bytes");
      }
      System.arraycopy(seed, 0, bytes, 0, bytes.length);
    }
  }
}
