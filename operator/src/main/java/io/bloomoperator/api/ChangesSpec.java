package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * A change stream applied between full builds: its adds are published as deltas every {@code
 * publishEvery}, so a new key is served within seconds instead of at the next full build. The full
 * build on {@code refreshInterval} stays what compacts the filter and applies deletions.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value = "has(self.kafka) != has(self.postgresLogical)",
    message = "exactly one of kafka and postgresLogical must be set")
public class ChangesSpec {

  /** Below this every publish is a manifest write more than the API server and readers need. */
  public static final String MIN_PUBLISH_EVERY = "1s";

  public static final String MAX_PUBLISH_EVERY = "10m";

  public static final String DEFAULT_PUBLISH_EVERY = "2s";

  /** A full build's stream position is taken this long before its scan started. */
  public static final String DEFAULT_OVERLAP = "30s";

  public static final String MAX_OVERLAP = "1h";

  /** What a delete event does. */
  public enum Deletions {
    /** Applied at the next full build (the filter may answer "maybe present" until then). */
    Rebuild,
    /**
     * Applied by the next delta through a counting shadow of the filter (4-bit counters per bit and
     * keyed fingerprints of the keys counted, off the heap, built at every full build); a delete
     * waits for the next full build whenever the operator cannot show its key was counted and is
     * deleted once, in order (docs/changes.md, "Deletions").
     */
    Counting
  }

  @Pattern(BloomFilterSpec.DURATION_PATTERN)
  @Size(max = 32)
  @Default(DEFAULT_PUBLISH_EVERY)
  @ValidationRule(
      value =
          "duration(self) >= duration('"
              + MIN_PUBLISH_EVERY
              + "') && duration(self) <= duration('"
              + MAX_PUBLISH_EVERY
              + "')",
      message = "must be between " + MIN_PUBLISH_EVERY + " and " + MAX_PUBLISH_EVERY)
  @JsonPropertyDescription(
      "How often the adds read from the stream are published as a delta, when there are any"
          + " (1s..10m, default 2s).")
  private String publishEvery;

  @Pattern(BloomFilterSpec.DURATION_PATTERN)
  @Size(max = 32)
  @Default(DEFAULT_OVERLAP)
  @ValidationRule(
      value = "duration(self) <= duration('" + MAX_OVERLAP + "')",
      message = "must be at most " + MAX_OVERLAP)
  @JsonPropertyDescription(
      "A full build resumes the stream from the events of this long before its scan started"
          + " (0s..1h, default 30s), so a key written to the stream before it was committed to the"
          + " source is not missed by both. Adds read twice are harmless.")
  private String overlap;

  @Default("Rebuild")
  @JsonPropertyDescription(
      "What a delete event does. Rebuild (default): the key leaves the filter at the next full"
          + " build; until then the filter may answer \"maybe present\" for it, never \"absent\""
          + " for a live key. Counting: the operator keeps 4-bit counters per filter bit and a"
          + " keyed fingerprint of every key counted (about 19 bytes a key at 1 %, off the heap)"
          + " and publishes the delete of a counted key in the next delta; a delete of a key not"
          + " counted, a record not keyed by its ID on Kafka's default partition, a delete after an"
          + " operator restart or with a shadow over its bound waits for the next full build as"
          + " with Rebuild (status.stream.deletions says why).")
  private Deletions deletions;

  @JsonPropertyDescription("A Kafka topic of key events, read without a consumer group.")
  private KafkaChangesSpec kafka;

  @JsonPropertyDescription(
      "PostgreSQL logical replication of the JDBC source's table (a jdbc source with a"
          + " jdbc:postgresql: URL only): the key column of the rows inserted and updated.")
  private PostgresLogicalChangesSpec postgresLogical;

  /** {@code publishEvery}, or its default. */
  public java.time.Duration publishInterval() {
    return Durations.parse(publishEvery == null ? DEFAULT_PUBLISH_EVERY : publishEvery);
  }

  /** {@code overlap}, or its default. */
  public java.time.Duration overlapInterval() {
    return Durations.parseAllowingZero(overlap == null ? DEFAULT_OVERLAP : overlap);
  }

  public String getPublishEvery() {
    return publishEvery;
  }

  public void setPublishEvery(String publishEvery) {
    this.publishEvery = publishEvery;
  }

  public String getOverlap() {
    return overlap;
  }

  public void setOverlap(String overlap) {
    this.overlap = overlap;
  }

  /** Whether deletes are counted ({@code deletions: Counting}); the default is Rebuild. */
  public boolean counting() {
    return deletions == Deletions.Counting;
  }

  public Deletions getDeletions() {
    return deletions;
  }

  public void setDeletions(Deletions deletions) {
    this.deletions = deletions;
  }

  public KafkaChangesSpec getKafka() {
    return kafka;
  }

  public void setKafka(KafkaChangesSpec kafka) {
    this.kafka = kafka;
  }

  public PostgresLogicalChangesSpec getPostgresLogical() {
    return postgresLogical;
  }

  public void setPostgresLogical(PostgresLogicalChangesSpec postgresLogical) {
    this.postgresLogical = postgresLogical;
  }
}
