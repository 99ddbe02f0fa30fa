package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/**
 * SASL authentication of a Kafka change stream with a user name and password from a Secret. Only
 * mechanisms that need nothing but the broker connection are offered: OAUTHBEARER would fetch
 * tokens from a URL and GSSAPI would reach a KDC, both places the egress policy does not see.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class KafkaSaslSpec {

  /** The SASL mechanisms offered. */
  public enum Mechanism {
    /** SCRAM with SHA-512: the password never crosses the wire. */
    SCRAM_SHA_512("SCRAM-SHA-512"),
    /** SCRAM with SHA-256. */
    SCRAM_SHA_256("SCRAM-SHA-256"),
    /** The password itself is sent: only with {@code tls}. */
    PLAIN("PLAIN");

    private final String kafkaName;

    Mechanism(String kafkaName) {
      this.kafkaName = kafkaName;
    }

    /** The name Kafka's {@code sasl.mechanism} takes. */
    public String kafkaName() {
      return kafkaName;
    }
  }

  @Required
  @JsonPropertyDescription(
      "SCRAM_SHA_512, SCRAM_SHA_256, or PLAIN (which sends the password, so it needs tls).")
  private Mechanism mechanism;

  @Required
  @Size(min = 1, max = 253)
  @Pattern(KeyRef.NAME_PATTERN)
  @JsonPropertyDescription(
      "Secret in the same namespace with keys username and password. The Secret must allow this"
          + " BloomFilter (annotation bloomoperator.io/allowed-filters) and every bootstrap server's"
          + " host (bloomoperator.io/allowed-hosts).")
  private String credentialsSecret;

  public Mechanism getMechanism() {
    return mechanism;
  }

  public void setMechanism(Mechanism mechanism) {
    this.mechanism = mechanism;
  }

  public String getCredentialsSecret() {
    return credentialsSecret;
  }

  public void setCredentialsSecret(String credentialsSecret) {
    this.credentialsSecret = credentialsSecret;
  }
}
