package io.bloomoperator.changes;

import io.bloomoperator.api.KafkaChangesSpec;
import io.bloomoperator.api.KafkaSaslSpec;
import io.bloomoperator.source.SecretAccess;
import io.bloomoperator.source.SourceException;
import io.bloomoperator.source.UserPassword;
import io.fabric8.kubernetes.api.model.Secret;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;

/**
 * The Kafka client's security properties, written by the operator from {@code spec.changes.kafka}'s
 * {@code tls} and {@code sasl} and the Secrets they name; nothing of the spec or the Secrets is
 * passed through as a property. In particular {@code sasl.jaas.config}, which names a login module
 * class and its options, is composed here with the user name and password as quoted, escaped values
 * of the one module the mechanism needs, so a password cannot add an option or a module.
 */
final class KafkaSecurity {

  /** Far beyond any user name or password; what is sent in the SASL exchange stays small. */
  static final int MAX_CREDENTIAL_CHARS = 1024;

  /**
   * One PEM value (a CA bundle, a certificate chain, a key): far beyond what a broker needs (a
   * public bundle of ~140 roots is ~220 KiB).
   */
  static final int MAX_PEM_BYTES = 256 * 1024;

  private static final String CERTIFICATE = "-----BEGIN CERTIFICATE-----";

  private KafkaSecurity() {}

  /**
   * The security properties for {@code spec}: {@code security.protocol} and what it needs.
   *
   * @param secrets the filter's Secrets; may be null only when neither tls.caSecret nor sasl is set
   * @throws StreamException of kind REFUSED when a Secret is missing, does not allow this filter or
   *     a bootstrap host, or holds something unusable (the message names the Secret and key, never
   *     a value)
   */
  static Map<String, String> properties(KafkaChangesSpec spec, SecretAccess secrets)
      throws StreamException {
    boolean needsSecrets =
        spec.getSasl() != null
            || spec.getTls() != null
                && (spec.getTls().getCaSecret() != null || spec.getTls().getClientSecret() != null);
    if (needsSecrets && secrets == null) {
      throw refused("this stream cannot read the Secrets spec.changes.kafka names");
    }
    Map<String, String> p = new LinkedHashMap<>();
    boolean tls = spec.getTls() != null;
    KafkaSaslSpec sasl = spec.getSasl();
    p.put(
        "security.protocol",
        tls
            ? (sasl != null ? "SASL_SSL" : "SSL")
            : (sasl != null ? "SASL_PLAINTEXT" : "PLAINTEXT"));
    if (tls) {
      // Kafka's default, set so that no other default can turn host name checks off.
      p.put(SslConfigs.SSL_ENDPOINT_IDENTIFICATION_ALGORITHM_CONFIG, "https");
      String ca = spec.getTls().getCaSecret();
      if (ca != null) {
        p.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PEM");
        p.put(SslConfigs.SSL_TRUSTSTORE_CERTIFICATES_CONFIG, caCertificates(secrets, ca));
      }
      String client = spec.getTls().getClientSecret();
      if (client != null) {
        Secret secret =
            forEveryBootstrapHost(spec, secrets, client, "changes.kafka.tls.clientSecret");
        p.put(SslConfigs.SSL_KEYSTORE_TYPE_CONFIG, "PEM");
        p.put(
            SslConfigs.SSL_KEYSTORE_CERTIFICATE_CHAIN_CONFIG,
            pem(secret, client, "tls.crt", CERTIFICATE, "PEM certificate"));
        p.put(
            SslConfigs.SSL_KEYSTORE_KEY_CONFIG,
            pem(
                secret,
                client,
                "tls.key",
                "-----BEGIN PRIVATE KEY-----",
                "unencrypted PKCS#8 private key in PEM (-----BEGIN PRIVATE KEY-----)"));
      }
    }
    if (sasl != null) {
      if (sasl.getMechanism() == KafkaSaslSpec.Mechanism.PLAIN && !tls) {
        throw refused("sasl mechanism PLAIN sends the password: it needs tls");
      }
      UserPassword user = credentials(spec, sasl, secrets);
      p.put(SaslConfigs.SASL_MECHANISM, sasl.getMechanism().kafkaName());
      p.put(SaslConfigs.SASL_JAAS_CONFIG, jaas(sasl.getMechanism(), user));
    }
    return p;
  }

  /** The JAAS configuration of the mechanism's own login module with this user. */
  static String jaas(KafkaSaslSpec.Mechanism mechanism, UserPassword user) {
    String module =
        mechanism == KafkaSaslSpec.Mechanism.PLAIN
            ? "org.apache.kafka.common.security.plain.PlainLoginModule"
            : "org.apache.kafka.common.security.scram.ScramLoginModule";
    return module
        + " required username="
        + quoted(user.username())
        + " password="
        + quoted(user.password())
        + ";";
  }

  /**
   * A JAAS option value: Kafka's parser reads a double-quoted string with backslash escapes, so a
   * backslash and a quote are escaped and the value cannot end early. Control characters were
   * refused before (the parser would end the string at a line break).
   */
  private static String quoted(String value) {
    return '"' + value.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
  }

  private static UserPassword credentials(
      KafkaChangesSpec spec, KafkaSaslSpec sasl, SecretAccess secrets) throws StreamException {
    String name = sasl.getCredentialsSecret();
    Secret secret =
        forEveryBootstrapHost(spec, secrets, name, "changes.kafka.sasl.credentialsSecret");
    UserPassword user;
    try {
      user = UserPassword.of(secret, name);
    } catch (SourceException e) {
      throw refused(e.getMessage());
    }
    checkCredential(name, "username", user.username());
    checkCredential(name, "password", user.password());
    return user;
  }

  /**
   * Secret {@code name}, which must allow being sent to every bootstrap server: its values go to
   * each of them (and to the brokers they advertise).
   */
  private static Secret forEveryBootstrapHost(
      KafkaChangesSpec spec, SecretAccess secrets, String name, String field)
      throws StreamException {
    List<SecretAccess.Destination> servers = new ArrayList<>();
    for (String entry : bootstrapServers(spec)) {
      BootstrapServer server = BootstrapServer.parse(entry);
      servers.add(new SecretAccess.Destination(server.host(), server.port()));
    }
    if (servers.isEmpty()) {
      throw refused("spec.changes.kafka needs bootstrap servers");
    }
    try {
      // One read of the Secret for all of them: a stream lists up to 8 bootstrap servers.
      return secrets.forSending(name, field, servers);
    } catch (SourceException e) {
      throw refused(e.getMessage());
    }
  }

  /** Key {@code key} of the Secret as PEM text holding {@code header} (else: "holds no what"). */
  private static String pem(Secret secret, String name, String key, String header, String what)
      throws StreamException {
    String encoded = secret.getData() == null ? null : secret.getData().get(key);
    if (encoded == null) {
      throw refused("Secret " + name + " has no key " + key);
    }
    if (encoded.length() > (MAX_PEM_BYTES / 3 + 1) * 4) {
      throw refused(
          "Secret " + name + " key " + key + " is larger than " + MAX_PEM_BYTES + " bytes");
    }
    String text;
    try {
      text = new String(Base64.getDecoder().decode(encoded), StandardCharsets.US_ASCII);
    } catch (IllegalArgumentException e) {
      throw refused("Secret " + name + " key " + key + " is not valid base64");
    }
    if (!text.contains(header)) {
      throw refused("Secret " + name + " key " + key + " holds no " + what);
    }
    return text;
  }

  private static void checkCredential(String secret, String key, String value)
      throws StreamException {
    if (value.isEmpty() || value.length() > MAX_CREDENTIAL_CHARS) {
      throw refused(
          "Secret "
              + secret
              + " key "
              + key
              + " must hold 1 to "
              + MAX_CREDENTIAL_CHARS
              + " characters");
    }
    if (value.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
      throw refused("Secret " + secret + " key " + key + " holds a control character");
    }
  }

  private static String caCertificates(SecretAccess secrets, String name) throws StreamException {
    String field = "changes.kafka.tls.caSecret";
    Secret secret;
    try {
      secret = secrets.forUse(name, field);
    } catch (SourceException e) {
      throw refused(e.getMessage());
    }
    String text = pem(secret, name, "ca.crt", CERTIFICATE, "PEM certificate");
    byte[] pem = text.getBytes(StandardCharsets.US_ASCII);
    // Parsed here so that a wrong value fails with a message of the operator's, naming no content.
    try {
      if (CertificateFactory.getInstance("X.509")
          .generateCertificates(new ByteArrayInputStream(pem))
          .isEmpty()) {
        throw new CertificateException("no certificate");
      }
    } catch (CertificateException e) {
      throw refused("Secret " + name + " key ca.crt holds no PEM certificate");
    }
    return text;
  }

  private static List<String> bootstrapServers(KafkaChangesSpec spec) {
    return spec.getBootstrapServers() == null ? List.of() : spec.getBootstrapServers();
  }

  private static StreamException refused(String message) {
    return new StreamException(StreamException.Kind.REFUSED, message);
  }
}
