package io.bloomoperator.source;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.KeyType;
import java.nio.charset.StandardCharsets;

/**
 * The line rules every text source follows: trim, skip blank lines and lines starting with {@code
 * #}, and for Long keys parse decimal numbers, counting the lines that are not. Keys that pass go
 * to a {@link KeyConsumer}.
 *
 * <p>A malformed line is reported by its position and length only, never by its content: the source
 * may be a Secret or a server the reader of the status has no right to see.
 *
 * <p>{@link LineBlock}s are parsed from their bytes ({@link #parse(LineBlock, KeyType,
 * KeyConsumer)}), with the same outcome as their lines one by one: a String key that is well-formed
 * UTF-8 goes to {@link KeyConsumer#putUtf8} as bytes, a Long key is parsed from ASCII digits; a
 * line these fast paths cannot settle exactly (non-ASCII at either end, which may be Unicode white
 * space; malformed UTF-8; non-ASCII in a Long key, which may be Unicode digits) is decoded and
 * parsed as a {@code String}. Blocks may be parsed on other threads and their {@link Tally tallies}
 * merged here in source order ({@link #merge}), which keeps counts, positions and the malformed-key
 * limit exactly as for one thread.
 */
public final class LineParser implements KeySink {

  /** Receives parsed keys. */
  public interface KeyConsumer {
    void putString(String key);

    void putLong(long key);

    /**
     * A String key given as its well-formed UTF-8 bytes; by default decoded for {@link #putString},
     * which hashes the same bytes.
     */
    default void putUtf8(byte[] utf8, int offset, int length) {
      putString(new String(utf8, offset, length, StandardCharsets.UTF_8));
    }
  }

  /**
   * What parsing one {@link LineBlock} found, positions relative to the block.
   *
   * @param keys keys passed to the consumer
   * @param malformed lines that were not keys of the declared type
   * @param firstMalformed index in the block of the first of them, or -1
   * @param firstMalformedLength its length in characters
   */
  public record Tally(int keys, int malformed, int firstMalformed, int firstMalformedLength) {}

  /**
   * What a parser counted since its last {@link #take()}: the counts of a lane of a source that
   * reads on several threads ({@link KeyLanes}), merged by the build's parser ({@link
   * #merge(Counts)}).
   *
   * @param positions lines and values seen (NULLs, blank and comment lines included)
   * @param keys keys passed to the consumer
   * @param malformed lines or values that were not keys of the declared type
   * @param nulls NULL values
   * @param firstMalformed position among these (from 1) of the first malformed one, or 0
   * @param firstMalformedLength its length in characters
   * @param lines whether lines were seen (else only values): the unit a message names
   */
  public record Counts(
      long positions,
      long keys,
      long malformed,
      long nulls,
      long firstMalformed,
      int firstMalformedLength,
      boolean lines) {}

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

  /** Parses the block's lines on this thread and merges the outcome. */
  @Override
  public void lines(LineBlock block) throws SourceException {
    merge(block, parse(block, keyType, consumer));
  }

  /**
   * Counts a block parsed by {@link #parse(LineBlock, KeyType, KeyConsumer)}, possibly on another
   * thread; blocks must be merged in source order.
   *
   * @throws SourceException when the malformed lines pass the limit
   */
  public void merge(LineBlock block, Tally tally) throws SourceException {
    lineSource = true;
    long base = position;
    position += block.count();
    keys += tally.keys();
    if (tally.malformed() > 0) {
      if (malformed == 0) {
        firstMalformedAt = base + tally.firstMalformed() + 1;
        firstMalformedLength = tally.firstMalformedLength();
      }
      malformed += tally.malformed();
      if (malformed > maxMalformed) {
        // One line at a time, the read stops at the first line past the limit.
        malformed = maxMalformed + 1;
        throw tooManyMalformed();
      }
    }
  }

  /**
   * Counts what another parser counted ({@link #take()}), possibly on another thread; positions in
   * messages follow the order of the merges.
   *
   * @throws SourceException when the malformed keys pass the limit
   */
  public void merge(Counts counts) throws SourceException {
    lineSource |= counts.lines();
    long base = position;
    position += counts.positions();
    keys += counts.keys();
    nulls += counts.nulls();
    if (counts.malformed() > 0) {
      if (malformed == 0) {
        firstMalformedAt = base + counts.firstMalformed();
        firstMalformedLength = counts.firstMalformedLength();
      }
      malformed += counts.malformed();
      if (malformed > maxMalformed) {
        malformed = maxMalformed + 1;
        throw tooManyMalformed();
      }
    }
  }

  /**
   * What this parser counted since the last call, after which it counts from zero: for a parser
   * (with no malformed-key limit of its own) whose counts another one merges.
   */
  public Counts take() {
    Counts counts =
        new Counts(
            position,
            keys,
            malformed,
            nulls,
            malformed == 0 ? 0 : firstMalformedAt,
            malformed == 0 ? 0 : firstMalformedLength,
            lineSource);
    position = 0;
    keys = 0;
    malformed = 0;
    nulls = 0;
    firstMalformedAt = 0;
    firstMalformedLength = 0;
    lineSource = false;
    return counts;
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
          throw tooManyMalformed();
        }
        return;
      }
      consumer.putLong(value);
    } else {
      consumer.putString(key);
    }
    keys++;
  }

  private SourceException tooManyMalformed() {
    String unit = lineSource ? "line" : "value";
    return new SourceException(
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

  /**
   * Applies the line rules to every line of {@code block}, passing its keys to {@code consumer},
   * and counts what it found; safe on any thread (no state but the arguments').
   */
  public static Tally parse(LineBlock block, KeyType keyType, KeyConsumer consumer) {
    byte[] b = block.bytes();
    int keys = 0;
    int malformed = 0;
    int firstMalformed = -1;
    int firstMalformedLength = 0;
    for (int i = 0; i < block.count(); i++) {
      int s = block.start(i);
      int e = block.end(i);
      while (s < e && asciiSpace(b[s])) {
        s++;
      }
      while (e > s && asciiSpace(b[e - 1])) {
        e--;
      }
      if (s == e) {
        continue;
      }
      int outcome;
      if (b[s] < 0 || b[e - 1] < 0) {
        outcome = slowLine(block.line(i), keyType, consumer);
      } else if (b[s] == '#') {
        continue;
      } else if (keyType == KeyType.LONG) {
        outcome = longKey(b, s, e, block, i, consumer);
      } else if (Utf8.isWellFormed(b, s, e)) {
        consumer.putUtf8(b, s, e - s);
        outcome = KEY;
      } else {
        outcome = slowLine(block.line(i), keyType, consumer);
      }
      if (outcome == KEY) {
        keys++;
      } else if (outcome != SKIPPED) {
        if (malformed++ == 0) {
          firstMalformed = i;
          firstMalformedLength = outcome;
        }
      }
    }
    return new Tally(keys, malformed, firstMalformed, firstMalformedLength);
  }

  /** {@link #parse(LineBlock, KeyType, KeyConsumer)}'s outcome of a line: a key was passed on. */
  private static final int KEY = -1;

  /** A blank or comment line. Any other outcome (0 and up) is a malformed key's length. */
  private static final int SKIPPED = -2;

  /** Character.isWhitespace among ASCII bytes, as String.strip() removes them. */
  private static boolean asciiSpace(byte c) {
    return c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
  }

  private static int longKey(
      byte[] b, int s, int e, LineBlock block, int line, KeyConsumer consumer) {
    for (int j = s; j < e; j++) {
      if (b[j] < 0) {
        // Long.parseLong takes any Unicode decimal digit, and the length is in characters.
        return slowLine(block.line(line), KeyType.LONG, consumer);
      }
    }
    // Long.parseLong's rules for ASCII: an optional sign, then at least one digit, no overflow;
    // accumulated negatively so that Long.MIN_VALUE fits.
    int j = s;
    boolean negative = b[j] == '-';
    if (negative || b[j] == '+') {
      j++;
      if (j == e) {
        return e - s;
      }
    }
    long limit = negative ? Long.MIN_VALUE : -Long.MAX_VALUE;
    long multiplyMin = limit / 10;
    long result = 0;
    for (; j < e; j++) {
      int digit = b[j] - '0';
      if (digit < 0 || digit > 9 || result < multiplyMin) {
        return e - s;
      }
      result *= 10;
      if (result < limit + digit) {
        return e - s;
      }
      result -= digit;
    }
    consumer.putLong(negative ? result : -result);
    return KEY;
  }

  /** The line rules on a decoded line, exactly as {@link #line} applies them. */
  private static int slowLine(String rawLine, KeyType keyType, KeyConsumer consumer) {
    String line = rawLine.strip();
    if (line.isEmpty() || line.charAt(0) == '#') {
      return SKIPPED;
    }
    if (keyType == KeyType.LONG) {
      try {
        consumer.putLong(Long.parseLong(line));
      } catch (NumberFormatException e) {
        return line.length();
      }
    } else {
      consumer.putString(line);
    }
    return KEY;
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
