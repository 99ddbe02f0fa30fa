package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;

/**
 * PostgreSQL logical replication of the filter's JDBC source: the operator reads the changes of a
 * publication through a replication slot it creates and owns, on the source's own connection
 * settings (URL, credentials Secret, TLS, egress policy). The publication must publish one table
 * with the key column only, and the key column must be the table's replica identity
 * (docs/changes.md gives the SQL).
 *
 * <p>Every name is a plain identifier (letters, digits, underscores), used exactly as written: the
 * operator quotes it as an identifier wherever it is sent, so {@code Products} and {@code products}
 * are different names, as in PostgreSQL's quoted identifiers.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class PostgresLogicalChangesSpec {

  /** A PostgreSQL identifier without quoting: at most NAMEDATALEN - 1 = 63 bytes. */
  public static final String IDENTIFIER_PATTERN = "^[A-Za-z_][A-Za-z0-9_]{0,62}$";

  /** PostgreSQL's own rule for replication slot names: lower-case letters, digits, underscores. */
  public static final String SLOT_PATTERN = "^[a-z0-9_]{1,63}$";

  @Required
  @Pattern(IDENTIFIER_PATTERN)
  @JsonPropertyDescription(
      "The publication to read (CREATE PUBLICATION ... FOR TABLE t (key)): one table, the key"
          + " column only.")
  private String publication;

  @Required
  @Pattern(SLOT_PATTERN)
  @JsonPropertyDescription(
      "The logical replication slot the operator creates for this filter and drops when the"
          + " filter is deleted. A slot of that name that the operator did not create for this"
          + " filter is refused, never used or dropped.")
  private String slot;

  @Required
  @Pattern(IDENTIFIER_PATTERN)
  @JsonPropertyDescription(
      "The key column of the published table; it must be the table's replica identity (its"
          + " primary key, or REPLICA IDENTITY USING INDEX on it).")
  private String keyColumn;

  public String getPublication() {
    return publication;
  }

  public void setPublication(String publication) {
    this.publication = publication;
  }

  public String getSlot() {
    return slot;
  }

  public void setSlot(String slot) {
    this.slot = slot;
  }

  public String getKeyColumn() {
    return keyColumn;
  }

  public void setKeyColumn(String keyColumn) {
    this.keyColumn = keyColumn;
  }
}
