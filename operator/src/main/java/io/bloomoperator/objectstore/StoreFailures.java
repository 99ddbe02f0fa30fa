package io.bloomoperator.objectstore;

import io.bloomoperator.source.EgressCheckedDns;
import java.net.UnknownHostException;
import java.security.cert.CertificateException;
import java.util.Optional;
import javax.net.ssl.SSLException;

/**
 * Why a request to a store failed, in fixed texts fit for a BloomStore's and a BloomFilter's
 * status: the SDK's own messages name the endpoint and the bucket, which are the administrator's,
 * and go to the log only.
 */
final class StoreFailures {

  static final String TLS =
      "TLS handshake failed: the store's certificate is not trusted (BloomStore spec.tls) or does"
          + " not match its endpoint";

  private StoreFailures() {}

  /** The fixed text for {@code e}'s cause, if it is one these texts tell. */
  static Optional<String> why(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof EgressCheckedDns.Refused refused) {
        return Optional.of(refused.getMessage());
      }
      if (t instanceof UnknownHostException) {
        return Optional.of("the store's endpoint does not resolve");
      }
      if (t instanceof SSLException || t instanceof CertificateException) {
        return Optional.of(TLS);
      }
    }
    return Optional.empty();
  }
}
