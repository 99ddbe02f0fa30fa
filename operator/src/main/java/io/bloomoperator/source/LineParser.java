package io.bloomoperator.source;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.KeyType;

/**
 * The line rules every text source follows: trim, skip blank lines and lines starting with {@code
 * #}, and for Long keys parse decimal numbers, counting the lines that are not. Keys that pass go
 * to a {@link KeyConsumer}.
 *
 * <p>A malformed line is reported by its position and length only, never by its content: the source
 * may be a Secret or a server the reader of the status has no right to see.
 */
public final class LineParser implements KeySink {

  /** Receives parsed keys. */
  public interface KeyConsumer {
    void putString(String key);

    void putLong(long key);
  }

  private final KeyType keyType;
  private final KeyConsumer consumer;
  private final long maxMalformed;
  private long keys;
  private long malformed;
  private long nulls;

  /** Lines (line sources) or values (row sources) seen so far, for positions in messages. */
  private long position;

  private boolean lineSource;
  private long firstMalformedAt;
  private int firstMalformedLength;

  /**
   * @param maxMalformed how many malformed lines are tolerated before the read fails; 0 fails on
   *     the first one, so a filter never silently lacks keys
   */
  public LineParser(KeyType keyType, KeyConsumer consumer, long maxMalformed) {
    this.keyType = keyType;
    this.consumer = consumer;
    this.maxMalformed = maxMalformed;
  }

  @Override
  public void line(String rawLine) throws SourceException {
    lineSource = true;
    position++;
    String line = rawLine.strip();
    if (line.isEmpty() || line.charAt(0) == '#') {
      return;
    }
    parse(line);
  }

  @Override
  public void value(String key) throws SourceException {
    position++;
    parse(key);
  }

  private void parse(String key) throws SourceException {
    if (keyType == KeyType.LONG) {
      long value;
      try {
        value = Long.parseLong(key);
      } catch (NumberFormatException e) {
        malformed++;
        if (malformed == 1) {
          firstMalformedAt = position;
          firstMalformedLength = key.length();
        }
        if (malformed > maxMalformed) {
          String unit = lineSource ? "line" : "value";
          throw new SourceException(
              Reasons.MALFORMED_KEYS,
              malformed
                  + " "
                  + unit
                  + "(s) are not Long keys (decimal 64-bit integers); the first is "
                  + unit
                  + " "
                  + firstMalformedAt
                  + " ("
                  + firstMalformedLength
                  + " characters)");
        }
        return;
      }
      consumer.putLong(value);
    } else {
      consumer.putString(key);
    }
    keys++;
  }

  @Override
  public void value(long key) throws SourceException {
    position++;
    if (keyType == KeyType.LONG) {
      consumer.putLong(key);
    } else {
      // A numeric column feeding a String filter: hash its decimal text, as a text export of
      // the same column would be hashed.
      consumer.putString(Long.toString(key));
    }
    keys++;
  }

  @Override
  public void nullValue() {
    position++;
    nulls++;
  }

  /** NULL values the source produced (not inserted). */
  public long nulls() {
    return nulls;
  }

  /** Keys passed to the consumer so far (duplicates included). */
  public long keys() {
    return keys;
  }

  /** Lines skipped because they were not keys of the declared type. */
  public long malformed() {
    return malformed;
  }
}
