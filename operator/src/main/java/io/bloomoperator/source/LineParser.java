package io.bloomoperator.source;

import io.bloomoperator.snapshot.KeyType;
import java.util.ArrayList;
import java.util.List;

/**
 * The line rules every text source follows: trim, skip blank lines and lines starting with
 * {@code #}, and for Long keys parse decimal numbers, counting (and sampling) the lines that are
 * not. Keys that pass go to a {@link KeyConsumer}.
 */
public final class LineParser implements KeySink {

  /** Receives parsed keys. */
  public interface KeyConsumer {
    void putString(String key);

    void putLong(long key);
  }

  private static final int SAMPLES = 3;

  private final KeyType keyType;
  private final KeyConsumer consumer;
  private final long maxMalformed;
  private long keys;
  private long malformed;
  private long nulls;
  private final List<String> malformedSamples = new ArrayList<>(SAMPLES);

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
    String line = rawLine.strip();
    if (line.isEmpty() || line.charAt(0) == '#') {
      return;
    }
    value(line);
  }

  @Override
  public void value(String key) throws SourceException {
    if (keyType == KeyType.LONG) {
      long value;
      try {
        value = Long.parseLong(key);
      } catch (NumberFormatException e) {
        malformed++;
        if (malformedSamples.size() < SAMPLES) {
          malformedSamples.add(key.length() > 40 ? key.substring(0, 40) + "…" : key);
        }
        if (malformed > maxMalformed) {
          throw new SourceException(SourceException.MALFORMED_KEYS, malformed
              + " line(s) are not Long keys (e.g. " + String.join(", ", quoted()) + ")");
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

  private List<String> quoted() {
    return malformedSamples.stream().map(s -> "\"" + s + "\"").toList();
  }
}
