package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.util.List;
import org.junit.jupiter.api.Test;

class ManifestSignatureTest {

  private static final KeyPair KEY = Ed25519Keys.generate();
  private static final String JSON = "{\"format\" : \"guava-bloomfilter-v1\", \"version\" : 7}";

  @Test
  void signatureVerifiesOnlyForTheExactTextAndNamespace() throws Exception {
    ManifestSigner signer = new ManifestSigner(KEY.getPrivate());
    TrustedKeys trusted = TrustedKeys.of(List.of(KEY.getPublic()));
    String data = signer.sign("shop", JSON).toData();

    assertThat(trusted.verify("shop", JSON, data)).isEqualTo(Ed25519Keys.keyId(KEY.getPublic()));
    assertRefused(() -> trusted.verify("shop2", JSON, data), LoadFailureReason.BAD_SIGNATURE);
    assertRefused(
        () -> trusted.verify("shop", JSON.replace("7", "8"), data),
        LoadFailureReason.BAD_SIGNATURE);
    assertRefused(() -> trusted.verify("shop", JSON + " ", data), LoadFailureReason.BAD_SIGNATURE);
    assertRefused(() -> trusted.verify("shop", JSON, null), LoadFailureReason.UNSIGNED);
    assertRefused(() -> trusted.verify("shop", JSON, "not json"), LoadFailureReason.BAD_SIGNATURE);
    assertRefused(
        () -> trusted.verify("shop", JSON, data.replace("Ed25519", "RSA")),
        LoadFailureReason.BAD_SIGNATURE);
    TrustedKeys other = TrustedKeys.of(List.of(Ed25519Keys.generate().getPublic()));
    assertRefused(() -> other.verify("shop", JSON, data), LoadFailureReason.UNTRUSTED_KEY);
    assertThat(TrustedKeys.none().verify("shop", JSON, null)).isNull();
  }

  @Test
  void pemRoundTripAndPublicKeyDerivation() throws Exception {
    String privatePem = Ed25519Keys.toPem(KEY.getPrivate());
    String publicPem = Ed25519Keys.toPem(KEY.getPublic());
    assertThat(privatePem).startsWith("-----BEGIN PRIVATE KEY-----\n");
    assertThat(publicPem).startsWith("-----BEGIN PUBLIC KEY-----\n");
    assertThat(Ed25519Keys.readPrivateKey(privatePem).getEncoded())
        .isEqualTo(KEY.getPrivate().getEncoded());
    assertThat(Ed25519Keys.readPublicKey(publicPem).getEncoded())
        .isEqualTo(KEY.getPublic().getEncoded());
    assertThat(Ed25519Keys.publicKeyOf(Ed25519Keys.readPrivateKey(privatePem)).getEncoded())
        .isEqualTo(KEY.getPublic().getEncoded());
    assertThat(new ManifestSigner(KEY.getPrivate()).keyId())
        .isEqualTo(Ed25519Keys.keyId(KEY.getPublic()))
        .hasSize(16);
    assertThatThrownBy(() -> Ed25519Keys.readPrivateKey(publicPem))
        .isInstanceOf(java.security.InvalidKeyException.class);
  }

  @Test
  void otherKeyTypesAreRejected() throws Exception {
    KeyPair ec = KeyPairGenerator.getInstance("EC").generateKeyPair();
    KeyPair ed448 = KeyPairGenerator.getInstance("Ed448").generateKeyPair();
    assertThatThrownBy(() -> TrustedKeys.of(List.of(ec.getPublic())))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new ManifestSigner(ed448.getPrivate()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Ed448");
  }

  private interface Call {
    void run() throws Exception;
  }

  private static void assertRefused(Call call, LoadFailureReason reason) {
    assertThatThrownBy(call::run)
        .isInstanceOfSatisfying(
            SnapshotRefusedException.class, e -> assertThat(e.reason()).isEqualTo(reason));
  }
}
