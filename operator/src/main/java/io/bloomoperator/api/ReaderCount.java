package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.Objects;

/**
 * Readers counted under one key: a version ({@code version}) or a load-failure reason ({@code
 * reason}) in {@link ReaderStatus}.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ReaderCount {

  @JsonPropertyDescription("The version these readers serve (0: none loaded yet).")
  private Long version;

  @JsonPropertyDescription(
      "Why these readers fail to load a newer version: a LoadFailureReason code (API, CHUNK, HEAP,"
          + " VERIFICATION, TOO_LARGE, UNSIGNED, BAD_SIGNATURE, ...).")
  private String reason;

  @JsonPropertyDescription("How many readers.")
  private Integer readers;

  public ReaderCount() {}

  public static ReaderCount ofVersion(long version, int readers) {
    ReaderCount count = new ReaderCount();
    count.version = version;
    count.readers = readers;
    return count;
  }

  public static ReaderCount ofReason(String reason, int readers) {
    ReaderCount count = new ReaderCount();
    count.reason = reason;
    count.readers = readers;
    return count;
  }

  public Long getVersion() {
    return version;
  }

  public void setVersion(Long version) {
    this.version = version;
  }

  public String getReason() {
    return reason;
  }

  public void setReason(String reason) {
    this.reason = reason;
  }

  public Integer getReaders() {
    return readers;
  }

  public void setReaders(Integer readers) {
    this.readers = readers;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ReaderCount other
        && Objects.equals(version, other.version)
        && Objects.equals(reason, other.reason)
        && Objects.equals(readers, other.readers);
  }

  @Override
  public int hashCode() {
    return Objects.hash(version, reason, readers);
  }
}
