package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;

/**
 * TLS to every broker of a Kafka change stream: the broker's certificate is verified against the CA
 * this names (or the operator's default trust store) and must name the host connected to. Nothing
 * here can turn verification off.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class KafkaTlsSpec {

  @Size(min = 1, max = 253)
  @Pattern(KeyRef.NAME_PATTERN)
  @JsonPropertyDescription(
      "Optional Secret in the same namespace whose key ca.crt holds the CA certificates (PEM) the"
          + " brokers' certificates are verified against; without it, the operator's default trust"
          + " store. The Secret must allow this BloomFilter (annotation"
          + " bloomoperator.io/allowed-filters).")
  private String caSecret;

  @Size(min = 1, max = 253)
  @Pattern(KeyRef.NAME_PATTERN)
  @JsonPropertyDescription(
      "Optional Secret in the same namespace with a client certificate (tls.crt, PEM) and its"
          + " unencrypted PKCS#8 key (tls.key), for brokers that authenticate clients by"
          + " certificate. The Secret must allow this BloomFilter (annotation"
          + " bloomoperator.io/allowed-filters) and every bootstrap server's host"
          + " (bloomoperator.io/allowed-hosts).")
  private String clientSecret;

  public String getClientSecret() {
    return clientSecret;
  }

  public void setClientSecret(String clientSecret) {
    this.clientSecret = clientSecret;
  }

  public String getCaSecret() {
    return caSecret;
  }

  public void setCaSecret(String caSecret) {
    this.caSecret = caSecret;
  }
}
