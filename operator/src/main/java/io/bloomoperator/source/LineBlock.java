package io.bloomoperator.source;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Consecutive lines of a text body as the bytes that came in, each without its terminator, so a
 * build can parse and hash them in bulk (and on another thread) instead of making a {@code String}
 * per line. Filled by the source, then handed to a {@link KeySink}, which may keep it: the source
 * never touches a block again once handed over.
 */
public final class LineBlock {

  /**
   * Lines a block's offsets grow to by doubling (256 KiB of offsets); beyond, only a block made
   * with more ({@link #of}) grows.
   */
  static final int MAX_LINES = 32 * 1024;

  private final byte[] bytes;
  private int[] starts;
  private int[] ends;
  private int count;

  /**
   * A block over {@code bytes} with room for {@code lines} lines before its offsets grow (by
   * doubling). Sized by the lines expected, not the bytes: a block of a few long lines keeps a few
   * offsets.
   */
  LineBlock(byte[] bytes, int lines) {
    this.bytes = bytes;
    this.starts = new int[Math.max(16, lines)];
    this.ends = new int[starts.length];
  }

  /** A block of {@code lines} given as text, e.g. for tests: each encoded in UTF-8. */
  public static LineBlock of(String... lines) {
    int total = 0;
    byte[][] encoded = new byte[lines.length][];
    for (int i = 0; i < lines.length; i++) {
      encoded[i] = lines[i].getBytes(StandardCharsets.UTF_8);
      total += encoded[i].length;
    }
    LineBlock block = new LineBlock(new byte[total], lines.length);
    int at = 0;
    for (byte[] line : encoded) {
      System.arraycopy(line, 0, block.bytes, at, line.length);
      block.add(at, at + line.length);
      at += line.length;
    }
    return block;
  }

  void add(int start, int end) {
    if (count == starts.length) {
      int grown = count < MAX_LINES ? Math.min(2 * count, MAX_LINES) : 2 * count;
      starts = Arrays.copyOf(starts, grown);
      ends = Arrays.copyOf(ends, grown);
    }
    starts[count] = start;
    ends[count] = end;
    count++;
  }

  /** The lines in this block. */
  public int count() {
    return count;
  }

  /**
   * Bytes of this block's line offsets (8 per line it has room for): with {@link #bytes()}, which
   * the next block may share, what keeping this block costs.
   */
  public long offsetBytes() {
    return 8L * starts.length;
  }

  /** The array holding every line's bytes; read only. */
  public byte[] bytes() {
    return bytes;
  }

  /** Where line {@code i} starts in {@link #bytes()}. */
  public int start(int i) {
    return starts[i];
  }

  /** Where line {@code i} ends (exclusive) in {@link #bytes()}. */
  public int end(int i) {
    return ends[i];
  }

  /**
   * Line {@code i} as text, invalid UTF-8 becoming U+FFFD as with an {@code InputStreamReader}:
   * what a line-by-line reader of the same body would have produced.
   */
  public String line(int i) {
    return new String(bytes, starts[i], ends[i] - starts[i], StandardCharsets.UTF_8);
  }
}
