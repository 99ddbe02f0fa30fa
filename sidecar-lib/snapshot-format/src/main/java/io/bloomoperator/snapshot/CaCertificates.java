package io.bloomoperator.snapshot;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;

/**
 * The CA certificates that verify an object store's TLS certificate, from a PEM bundle (one or more
 * {@code -----BEGIN CERTIFICATE-----} blocks, as in a {@code ca.crt}). They are trusted <em>instead
 * of</em> the JVM's default CAs: a store with a private CA is then verified against that CA alone,
 * and a bundle that should also admit public CAs must hold them. The operator, the reader library
 * and the CLI use this one class, so that all three accept the same bundles.
 *
 * <p>Failures carry fixed texts that name nothing of the bundle: an operator copies them into a
 * BloomStore's status.
 */
public final class CaCertificates {

  /** Bigger bundles are refused before they are read: a system bundle is about 200 KiB. */
  public static final int MAX_BYTES = 1024 * 1024;

  private final List<X509Certificate> certificates;

  private CaCertificates(List<X509Certificate> certificates) {
    this.certificates = List.copyOf(certificates);
  }

  /**
   * The certificates of a PEM bundle.
   *
   * @throws IllegalArgumentException with a fixed text when the bundle is larger than {@link
   *     #MAX_BYTES}, is no PEM certificate bundle, or holds no certificate
   */
  public static CaCertificates parse(byte[] pem) {
    if (pem.length > MAX_BYTES) {
      throw new IllegalArgumentException("CA bundle larger than " + MAX_BYTES + " bytes");
    }
    Collection<? extends Certificate> parsed;
    try (InputStream in = new ByteArrayInputStream(pem)) {
      parsed = CertificateFactory.getInstance("X.509").generateCertificates(in);
    } catch (CertificateException | IOException e) {
      throw new IllegalArgumentException("CA bundle is not a PEM certificate bundle", e);
    }
    List<X509Certificate> certificates = new ArrayList<>();
    for (Certificate certificate : parsed) {
      if (certificate instanceof X509Certificate x509) {
        certificates.add(x509);
      }
    }
    if (certificates.isEmpty()) {
      throw new IllegalArgumentException("CA bundle holds no certificate");
    }
    return new CaCertificates(certificates);
  }

  /**
   * The certificates of the PEM bundle in {@code file}.
   *
   * @throws IOException if the file cannot be read
   * @throws IllegalArgumentException as {@link #parse}
   */
  public static CaCertificates read(Path file) throws IOException {
    if (Files.size(file) > MAX_BYTES) {
      throw new IllegalArgumentException("CA bundle larger than " + MAX_BYTES + " bytes");
    }
    return parse(Files.readAllBytes(file));
  }

  /** How many certificates the bundle holds. */
  public int size() {
    return certificates.size();
  }

  /** Trust managers that accept exactly the chains ending at one of these certificates. */
  public TrustManager[] trustManagers() {
    try {
      KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      for (int i = 0; i < certificates.size(); i++) {
        store.setCertificateEntry("ca-" + i, certificates.get(i));
      }
      TrustManagerFactory factory =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      factory.init(store);
      return factory.getTrustManagers();
    } catch (GeneralSecurityException | IOException e) {
      // Only the JVM's own algorithms are named; a JVM without them has no TLS at all.
      throw new IllegalStateException("the JVM cannot build a trust store", e);
    }
  }
}
