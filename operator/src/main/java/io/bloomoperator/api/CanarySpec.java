package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * A canary for new versions: each goes first to {@code percent} % of the readers (chosen by a hash
 * of their pod name, docs/reader-protocol.md), and to every reader once those served it for {@code
 * holdFor} without a failure to load it.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class CanarySpec {

  /** A hold shorter than this cannot see a reader's report of the canary. */
  public static final String MIN_HOLD_FOR = "1s";

  /** A canary that holds longer than a day blocks every later build for as long. */
  public static final String MAX_HOLD_FOR = "24h";

  @Required
  @Min(1)
  @Max(100)
  @JsonPropertyDescription(
      "Share of the readers, in whole percent (1..100), that load a new version first: those whose"
          + " pod name hashes below it (docs/reader-protocol.md), the same pods on every restart.")
  private Integer percent;

  @Required
  @Pattern(BloomFilterSpec.DURATION_PATTERN)
  @Size(max = 32)
  @ValidationRule(
      value =
          "duration(self) >= duration('"
              + MIN_HOLD_FOR
              + "') && duration(self) <= duration('"
              + MAX_HOLD_FOR
              + "')",
      message = "must be between " + MIN_HOLD_FOR + " and " + MAX_HOLD_FOR)
  @JsonPropertyDescription(
      "How long the share serves a new version before it goes to every reader (e.g. 30s, 10m), if"
          + " at least one reader of the share loaded it and none failed to (1s..24h).")
  private String holdFor;

  public Integer getPercent() {
    return percent;
  }

  public void setPercent(Integer percent) {
    this.percent = percent;
  }

  public String getHoldFor() {
    return holdFor;
  }

  public void setHoldFor(String holdFor) {
    this.holdFor = holdFor;
  }
}
