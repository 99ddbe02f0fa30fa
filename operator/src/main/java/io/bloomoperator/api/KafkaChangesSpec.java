package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.List;

/**
 * A Kafka topic of key events. Only typed, bounded fields: no free-form client property reaches the
 * client (a tenant's {@code sasl.jaas.config} or {@code interceptor.classes} would run code in the
 * operator). The operator reads the topic without a consumer group and never commits offsets.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value = "self.value != 'Json' || has(self.keyField)",
    message = "keyField is required when value is Json")
@ValidationRule(
    value = "!has(self.operationField) || self.value == 'Json'",
    message = "operationField needs value: Json")
@ValidationRule(
    value = "!has(self.sasl) || self.sasl.mechanism != 'PLAIN' || has(self.tls)",
    message = "sasl mechanism PLAIN sends the password: it needs tls")
public class KafkaChangesSpec {

  /** host:port, the host a DNS name, an IPv4 address or a bracketed IPv6 address. */
  public static final String BOOTSTRAP_PATTERN =
      "^([a-zA-Z0-9]([-a-zA-Z0-9.]{0,251}[a-zA-Z0-9])?|\\[[0-9a-fA-F:.]{2,45}\\]):[0-9]{1,5}$";

  /** Kafka's own rule for topic names. */
  public static final String TOPIC_PATTERN = "^[a-zA-Z0-9._-]{1,249}$";

  /** A top-level JSON field name. */
  public static final String FIELD_PATTERN = "^[^\\x00-\\x1f]{1,128}$";

  /** How a record's value carries the key. */
  public enum ValueFormat {
    /** The value is the key, as UTF-8 text (a Long key: its decimal digits). */
    Text,
    /** The value is a JSON object; {@code keyField} holds the key. */
    Json
  }

  @Required
  @Size(min = 1, max = 8)
  @JsonPropertyDescription(
      "Bootstrap servers, host:port (1 to 8). Every broker the cluster then advertises is checked"
          + " against the operator's egress policy like these.")
  private List<@Pattern(BOOTSTRAP_PATTERN) @Size(max = 261) String> bootstrapServers;

  @Required
  @Pattern(TOPIC_PATTERN)
  @JsonPropertyDescription("The topic; every partition is read, new ones from their start.")
  private String topic;

  @Default("Text")
  @JsonPropertyDescription(
      "Text (default): the record value is the key. Json: a JSON object whose keyField holds it.")
  private ValueFormat value;

  @Pattern(FIELD_PATTERN)
  @JsonPropertyDescription("With value: Json, the top-level field holding the key.")
  private String keyField;

  @Pattern(FIELD_PATTERN)
  @JsonPropertyDescription(
      "With value: Json, an optional top-level field naming the operation; a record whose"
          + " operation is one of deleteOperations is a delete, any other an add.")
  private String operationField;

  @Size(max = 8)
  @JsonPropertyDescription(
      "Operation values that mean delete (default [\"delete\"]); see spec.changes.deletions.")
  private List<@Size(min = 1, max = 64) String> deleteOperations;

  @JsonPropertyDescription(
      "TLS to every broker, the certificate verified (set it, even empty, to use TLS).")
  private KafkaTlsSpec tls;

  @JsonPropertyDescription("SASL authentication with a user name and password from a Secret.")
  private KafkaSaslSpec sasl;

  public KafkaTlsSpec getTls() {
    return tls;
  }

  public void setTls(KafkaTlsSpec tls) {
    this.tls = tls;
  }

  public KafkaSaslSpec getSasl() {
    return sasl;
  }

  public void setSasl(KafkaSaslSpec sasl) {
    this.sasl = sasl;
  }

  public List<String> getBootstrapServers() {
    return bootstrapServers;
  }

  public void setBootstrapServers(List<String> bootstrapServers) {
    this.bootstrapServers = bootstrapServers;
  }

  public String getTopic() {
    return topic;
  }

  public void setTopic(String topic) {
    this.topic = topic;
  }

  public ValueFormat getValue() {
    return value;
  }

  public void setValue(ValueFormat value) {
    this.value = value;
  }

  public String getKeyField() {
    return keyField;
  }

  public void setKeyField(String keyField) {
    this.keyField = keyField;
  }

  public String getOperationField() {
    return operationField;
  }

  public void setOperationField(String operationField) {
    this.operationField = operationField;
  }

  public List<String> getDeleteOperations() {
    return deleteOperations;
  }

  public void setDeleteOperations(List<String> deleteOperations) {
    this.deleteOperations = deleteOperations;
  }
}
