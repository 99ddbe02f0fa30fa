package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** Where the change stream of {@code spec.changes} stands; only the operator's own figures. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class StreamStatus {

  @JsonPropertyDescription(
      "The stream position the published version is consistent with (partition:offset,...).")
  private String position;

  @JsonPropertyDescription("Events in the stream after the last read, when known.")
  private Long lag;

  @JsonPropertyDescription("When the last delta of stream adds was published (RFC 3339).")
  private String lastDeltaAt;

  @JsonPropertyDescription("Adds published from the stream since this operator process started.")
  private Long addsApplied;

  @JsonPropertyDescription(
      "Delete events read since the last full build that wait for the next one (all of them with"
          + " deletions: Rebuild; with Counting, those not applied by a delta).")
  private Long deletionsPending;

  @JsonPropertyDescription(
      "deletions: Counting: delete events published by deltas since the last full build.")
  private Long deletionsApplied;

  @JsonPropertyDescription(
      "deletions: Counting: \"Counting\" while deletes are published by deltas, else why they wait"
          + " for the next full build (the operator's own text).")
  private String deletions;

  @JsonPropertyDescription(
      "Events that were not of the configured format, since the last full build.")
  private Long malformedEvents;

  @JsonPropertyDescription(
      "Why the stream is not being read, when it is not (the operator's own text).")
  private String message;

  @JsonPropertyDescription(
      "postgresLogical: the replication slot the operator created for this filter, as"
          + " <system identifier>/<database>/<slot>; only a slot recorded here is used or dropped.")
  private String slot;

  @JsonPropertyDescription(
      "postgresLogical: write-ahead log the database keeps for the slot (bytes, when last"
          + " measured); beyond BLOOM_PG_SLOT_MAX_RETAINED_BYTES the operator drops the slot.")
  private Long retainedWalBytes;

  public String getPosition() {
    return position;
  }

  public void setPosition(String position) {
    this.position = position;
  }

  public Long getLag() {
    return lag;
  }

  public void setLag(Long lag) {
    this.lag = lag;
  }

  public String getLastDeltaAt() {
    return lastDeltaAt;
  }

  public void setLastDeltaAt(String lastDeltaAt) {
    this.lastDeltaAt = lastDeltaAt;
  }

  public Long getAddsApplied() {
    return addsApplied;
  }

  public void setAddsApplied(Long addsApplied) {
    this.addsApplied = addsApplied;
  }

  public Long getDeletionsApplied() {
    return deletionsApplied;
  }

  public void setDeletionsApplied(Long deletionsApplied) {
    this.deletionsApplied = deletionsApplied;
  }

  public String getDeletions() {
    return deletions;
  }

  public void setDeletions(String deletions) {
    this.deletions = deletions;
  }

  public Long getDeletionsPending() {
    return deletionsPending;
  }

  public void setDeletionsPending(Long deletionsPending) {
    this.deletionsPending = deletionsPending;
  }

  public Long getMalformedEvents() {
    return malformedEvents;
  }

  public void setMalformedEvents(Long malformedEvents) {
    this.malformedEvents = malformedEvents;
  }

  public String getMessage() {
    return message;
  }

  public void setMessage(String message) {
    this.message = message;
  }

  public String getSlot() {
    return slot;
  }

  public void setSlot(String slot) {
    this.slot = slot;
  }

  public Long getRetainedWalBytes() {
    return retainedWalBytes;
  }

  public void setRetainedWalBytes(Long retainedWalBytes) {
    this.retainedWalBytes = retainedWalBytes;
  }
}
