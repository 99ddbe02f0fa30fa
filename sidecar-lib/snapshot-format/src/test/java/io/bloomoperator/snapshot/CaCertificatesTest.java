package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the operator, the reader library and the CLI rely on when a store names a CA bundle: which
 * bundles are read, which are refused and with what text, and that the trust managers accept the
 * bundle's CAs instead of the JVM's.
 *
 * <p>The fixtures were made once by {@code openssl} (P-256, valid for 100 years, so the test needs
 * no tool at run time): two self-signed CAs and a server certificate ({@code store.example}) that
 * {@code test-ca} signed.
 */
class CaCertificatesTest {

  private static final String TEST_CA =
      """
      -----BEGIN CERTIFICATE-----
      MIIBizCCATGgAwIBAgIURpYEI9tx+3Wdw5OyqwqqPvwnsyowCgYIKoZIzj0EAwIw
      EjEQMA4GA1UEAwwHdGVzdC1jYTAgFw0yNjEyMDIxMjEwMjNaGA8yMTI2MTEwODEy
      MTAyM1owEjEQMA4GA1UEAwwHdGVzdC1jYTBZMBMGByqGSM49AgEGCCqGSM49AwEH
      A0IABPR3RL5H8Dp8ZupclRLdpeQa23NSIxwRx++BsR9KjueYqyhVFLMVaz6dZpwh
      7XYzY8e+A84x2oApuWdEwXKi3aijYzBhMB0GA1UdDgQWBBQO8BGvIo0zdaxvPRtH
      hhsUG9omQjAfBgNVHSMEGDAWgBQO8BGvIo0zdaxvPRtHhhsUG9omQjAPBgNVHRMB
      Af8EBTADAQH/MA4GA1UdDwEB/wQEAwIBBjAKBggqhkjOPQQDAgNIADBFAiEApphX
      NfmN2CFK4ng55Yk7eTziilZGUb3bmDOo027fezACIGeFlN7GjkY7EdIUK6Q02pDk
      XxDZMlNy0CBWooFVLMv/
      -----END CERTIFICATE-----
      """;

  private static final String OTHER_CA =
      """
      -----BEGIN CERTIFICATE-----
      MIIBjTCCATOgAwIBAgIUO/iyOzNh3zO5OAq9pHbtznsG8UgwCgYIKoZIzj0EAwIw
      EzERMA8GA1UEAwwIb3RoZXItY2EwIBcNMjYxMjAyMTIxMDIzWhgPMjEyNjExMDgx
      MjEwMjNaMBMxETAPBgNVBAMMCG90aGVyLWNhMFkwEwYHKoZIzj0CAQYIKoZIzj0D
      AQcDQgAEjdsHVr4L+0MhWFAri9GoZDA9Mp13zLHQhZwIalUpDwp1jSZr2xhCM8EU
      Ej1uM0pAzy5goIJ0KYgQRUwaDNuECKNjMGEwHQYDVR0OBBYEFIKIv8xxTBAOImUm
      4PLI5k7rROofMB8GA1UdIwQYMBaAFIKIv8xxTBAOImUm4PLI5k7rROofMA8GA1Ud
      EwEB/wQFMAMBAf8wDgYDVR0PAQH/BAQDAgEGMAoGCCqGSM49BAMCA0gAMEUCIQD9
      HVIlY3D6dLgmsAUCUCBtwGXyZ7myWrYZfeNRAAA/OgIgUrUKU8b1Qgn4lWLgHFpt
      JpiQwSZHQTM2BLQ5XBP3QbQ=
      -----END CERTIFICATE-----
      """;

  private static final String STORE_SIGNED_BY_TEST_CA =
      """
      -----BEGIN CERTIFICATE-----
      MIIBvTCCAWKgAwIBAgIUf+7WQnZ6Tg/UfFrpEdu/F8/IYe8wCgYIKoZIzj0EAwIw
      EjEQMA4GA1UEAwwHdGVzdC1jYTAgFw0yNjEyMDIxMjEwMjNaGA8yMTI2MTEwODEy
      MTAyM1owGDEWMBQGA1UEAwwNc3RvcmUuZXhhbXBsZTBZMBMGByqGSM49AgEGCCqG
      SM49AwEHA0IABAVO5NaGAxl6OyFcpKLDMehqw1fbWFuUpmsZSEA5yc0RYboA/JCl
      Yim06dIIkLaOMsHoxwbpfr5vKJgovc7RuCWjgY0wgYowGAYDVR0RBBEwD4INc3Rv
      cmUuZXhhbXBsZTAJBgNVHRMEAjAAMA4GA1UdDwEB/wQEAwIHgDATBgNVHSUEDDAK
      BggrBgEFBQcDATAdBgNVHQ4EFgQUo7j0V6hhxl+BBVO/sQeq1onvXPAwHwYDVR0j
      BBgwFoAUDvARryKNM3Wsbz0bR4YbFBvaJkIwCgYIKoZIzj0EAwIDSQAwRgIhAKP+
      orLBP/pfAnuqWAbDIs8gvC62WGs4m24vMW5wMuRKAiEA7EYYHMFSQ+oIVMZZJG0J
      N+0dZ7Kv+PLixmDNDjxt5b0=
      -----END CERTIFICATE-----
      """;

  @TempDir Path dir;

  @Test
  void readsEveryCertificateOfABundle() {
    assertThat(CaCertificates.parse(bytes(TEST_CA)).size()).isEqualTo(1);
    assertThat(CaCertificates.parse(bytes(TEST_CA + OTHER_CA)).size()).isEqualTo(2);
  }

  @Test
  void trustsExactlyTheBundlesCas() throws Exception {
    X509TrustManager trust = x509(CaCertificates.parse(bytes(TEST_CA)).trustManagers());
    X509Certificate[] chain = {certificate(STORE_SIGNED_BY_TEST_CA), certificate(TEST_CA)};

    assertThatCode(() -> trust.checkServerTrusted(chain, "ECDHE_ECDSA")).doesNotThrowAnyException();
    assertThat(trust.getAcceptedIssuers()).containsExactly(certificate(TEST_CA));

    // Instead of the JVM's CAs, not in addition: a CA the bundle lacks verifies nothing.
    X509TrustManager other = x509(CaCertificates.parse(bytes(OTHER_CA)).trustManagers());
    assertThatThrownBy(() -> other.checkServerTrusted(chain, "ECDHE_ECDSA"))
        .isInstanceOf(CertificateException.class);
  }

  @Test
  void trustsEveryCaOfABundle() throws Exception {
    X509TrustManager trust = x509(CaCertificates.parse(bytes(OTHER_CA + TEST_CA)).trustManagers());

    assertThat(trust.getAcceptedIssuers())
        .containsExactlyInAnyOrder(certificate(TEST_CA), certificate(OTHER_CA));
    X509Certificate[] chain = {certificate(STORE_SIGNED_BY_TEST_CA), certificate(TEST_CA)};
    assertThatCode(() -> trust.checkServerTrusted(chain, "ECDHE_ECDSA")).doesNotThrowAnyException();
  }

  @Test
  void readsABundleOfExactlyTheLimitAndRefusesOneByteMore() throws Exception {
    byte[] atLimit = padded(TEST_CA, CaCertificates.MAX_BYTES);
    assertThat(CaCertificates.parse(atLimit).size()).isEqualTo(1);
    Path file = Files.write(dir.resolve("ca.crt"), atLimit);
    assertThat(CaCertificates.read(file).size()).isEqualTo(1);

    byte[] over = padded(TEST_CA, CaCertificates.MAX_BYTES + 1);
    assertThatThrownBy(() -> CaCertificates.parse(over))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("CA bundle larger than 1048576 bytes");
    Path big = Files.write(dir.resolve("big.crt"), over);
    assertThatThrownBy(() -> CaCertificates.read(big))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("CA bundle larger than 1048576 bytes");
  }

  @Test
  void refusesWhatIsNoCertificateBundleWithAFixedText() {
    // The texts go into a BloomStore's status: they name nothing of the bundle.
    assertThatThrownBy(() -> CaCertificates.parse(bytes("not a certificate")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("CA bundle is not a PEM certificate bundle")
        .hasCauseInstanceOf(CertificateException.class);
    assertThatThrownBy(() -> CaCertificates.parse(new byte[0]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("CA bundle holds no certificate");
  }

  @Test
  void aMissingFileIsAnIoError() {
    assertThatThrownBy(() -> CaCertificates.read(dir.resolve("absent.crt")))
        .isInstanceOf(NoSuchFileException.class);
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.US_ASCII);
  }

  /** The bundle followed by newlines up to {@code length} bytes: still one certificate. */
  private static byte[] padded(String pem, int length) {
    byte[] out = new byte[length];
    Arrays.fill(out, (byte) '\n');
    byte[] text = bytes(pem);
    System.arraycopy(text, 0, out, 0, text.length);
    return out;
  }

  private static X509Certificate certificate(String pem) throws CertificateException {
    return (X509Certificate)
        CertificateFactory.getInstance("X.509")
            .generateCertificate(new ByteArrayInputStream(bytes(pem)));
  }

  private static X509TrustManager x509(TrustManager[] managers) {
    assertThat(managers).hasSize(1);
    return (X509TrustManager) managers[0];
  }
}
