package io.bloomoperator.source;

/**
 * Keys of one partition's rows on their way from its reading thread to the build's thread, before
 * the build hands out lanes or for a sink without them ({@link PartitionHandOver}): at most {@link
 * #MAX_KEYS} keys and {@link #MAX_CHARS} characters of text keys (plus the one value that crosses
 * the bound, itself at most {@code BLOOM_JDBC_MAX_VALUE_BYTES}), so a batch holds at most about 1.2
 * MiB whatever the rows hold. {@link #replay} hands them to the build's sink in the order they
 * came.
 */
final class KeyBatch implements KeySink {

  static final int MAX_KEYS = 4096;
  static final int MAX_CHARS = 256 * 1024;

  private static final byte LONG = 0;
  private static final byte TEXT = 1;
  private static final byte NULL = 2;

  private final byte[] kinds = new byte[MAX_KEYS];
  private final long[] longs = new long[MAX_KEYS];
  private final String[] texts = new String[MAX_KEYS];
  private int count;
  private long chars;

  /** Whether the batch must be handed over before it takes another key. */
  boolean full() {
    return count == MAX_KEYS || chars >= MAX_CHARS;
  }

  boolean isEmpty() {
    return count == 0;
  }

  /** Bytes this batch holds at most, for the bound in {@link PartitionedRead}. */
  static long maxBytes(int maxValueBytes) {
    return MAX_KEYS * (1L + Long.BYTES + 8) + 2L * MAX_CHARS + 2L * maxValueBytes;
  }

  @Override
  public void value(long key) {
    kinds[count] = LONG;
    longs[count++] = key;
  }

  @Override
  public void value(String key) {
    kinds[count] = TEXT;
    texts[count++] = key;
    chars += key.length();
  }

  @Override
  public void nullValue() {
    kinds[count++] = NULL;
  }

  /** Rows of a database are typed values, never lines. */
  @Override
  public void line(String rawLine) {
    throw new UnsupportedOperationException("a jdbc partition delivers values, not lines");
  }

  /** Hands every key to {@code sink}, in order. */
  void replay(KeySink sink) throws SourceException {
    for (int i = 0; i < count; i++) {
      switch (kinds[i]) {
        case LONG -> sink.value(longs[i]);
        case TEXT -> sink.value(texts[i]);
        default -> sink.nullValue();
      }
    }
  }
}
