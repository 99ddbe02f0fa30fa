package io.bloomoperator.source;

/** Receives the keys a {@link KeySource} streams. */
public interface KeySink {

  /**
   * One line of text as the source holds it. Text sources share one set of rules (trim, skip
   * blank lines and {@code #} comments, parse per key type), implemented by {@link LineParser}.
   */
  void line(String rawLine) throws SourceException;
}
