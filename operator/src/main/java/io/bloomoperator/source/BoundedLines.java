package io.bloomoperator.source;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * Splits a UTF-8 byte stream into lines as {@link java.io.BufferedReader#readLine()} does ({@code
 * \n}, {@code \r\n} or {@code \r} ends a line; a leading byte order mark is dropped), but with a
 * maximum line length: a longer line fails with {@link BodyLimitExceeded} as soon as the limit is
 * passed, so a body without newlines costs at most the limit, not the whole body.
 *
 * <p>Lines go to the sink in {@link LineBlock}s of about {@link #BLOCK} bytes or {@link
 * #MAX_BLOCK_LINES} lines, whichever comes first, as the bytes that came in (read straight into the
 * block, no copy but the unfinished line carried to the next block); a sink that wants text gets
 * what an {@code InputStreamReader} would have made of them (invalid UTF-8 as U+FFFD). Every line
 * before a failure reaches the sink before the failure is thrown, as when lines were handed over
 * one by one.
 */
final class BoundedLines {

  /** Bytes per block: large enough to amortise a hand-over, small enough to keep several alive. */
  static final int BLOCK = 256 * 1024;

  /**
   * Most lines in one block: a block of very short lines goes at this many, so its offsets (8 bytes
   * a line) take at most 256 KiB, as its text does. With {@link #BLOCK} (or twice the longest line,
   * if more), what one block holds is bounded whatever the lines' length.
   */
  static final int MAX_BLOCK_LINES = LineBlock.MAX_LINES;

  /**
   * Longest a line that has come in waits in an unfilled block: a slow source's keys still reach
   * the sink (and the build's stall check) as they arrive, not only once a block is full.
   */
  static final long HAND_OVER_NANOS = 100_000_000L;

  private static final byte[] BOM = {(byte) 0xef, (byte) 0xbb, (byte) 0xbf};

  private final int maxLineBytes;
  private final String setting;
  private final KeySink sink;
  private LineBlock block;
  private byte[] bytes;
  private int fill;
  private int lineStart;
  private long lineNumber = 1;
  private boolean afterCr;
  private long blockStarted = System.nanoTime();

  /** Lines of the block handed over last, and of the blocks handed over from this array. */
  private int lastLines;

  private int arrayLines;

  private BoundedLines(int maxLineBytes, String setting, KeySink sink) {
    this.maxLineBytes = maxLineBytes;
    this.setting = setting;
    this.sink = sink;
    this.bytes = new byte[BLOCK];
    this.block = newBlock(bytes, 64);
  }

  /**
   * Feeds every line of {@code in} to {@code sink}.
   *
   * @param setting the environment variable that sets {@code maxLineBytes}, for the message
   */
  static void stream(InputStream in, int maxLineBytes, String setting, KeySink sink)
      throws IOException, SourceException {
    new BoundedLines(maxLineBytes, setting, sink).read(in);
  }

  private void read(InputStream in) throws IOException, SourceException {
    byte[] start = in.readNBytes(BOM.length);
    if (!Arrays.equals(start, BOM)) {
      System.arraycopy(start, 0, bytes, 0, start.length);
      scan(0, start.length);
    }
    while (true) {
      if (fill == bytes.length) {
        next();
      }
      int n;
      try {
        n = in.read(bytes, fill, bytes.length - fill);
      } catch (IOException e) {
        handOver();
        throw e;
      }
      if (n < 0) {
        break;
      }
      scan(fill, fill + n);
      if (block.count() > 0
          && (in.available() == 0 || System.nanoTime() - blockStarted > HAND_OVER_NANOS)) {
        // The next read may wait: the lines that are complete go now.
        passOn(false);
      }
    }
    if (fill > lineStart) {
      block.add(lineStart, fill);
    }
    handOver();
  }

  /** Records the lines ending in {@code bytes[from, to)}, which have just come in. */
  private void scan(int from, int to) throws BodyLimitExceeded, SourceException {
    final byte[] b = bytes;
    for (int i = from; i < to; i++) {
      byte c = b[i];
      if (c == '\n' || c == '\r') {
        if (c == '\r' || !afterCr) {
          block.add(lineStart, i);
          lineNumber++;
          if (block.count() == MAX_BLOCK_LINES) {
            passOn(true);
          }
        }
        lineStart = i + 1;
        afterCr = c == '\r';
        continue;
      }
      afterCr = false;
      if (i - lineStart == maxLineBytes) {
        fill = i;
        handOver();
        throw new BodyLimitExceeded(
            "line " + lineNumber + " is longer than " + maxLineBytes + " bytes", setting);
      }
    }
    fill = to;
  }

  /** Hands the full block over and starts the next with the unfinished line. */
  private void next() throws SourceException {
    int carry = fill - lineStart;
    // A block must keep room for new bytes after the carried line (at most maxLineBytes).
    byte[] fresh = new byte[carry > BLOCK / 2 ? 2 * carry : BLOCK];
    System.arraycopy(bytes, lineStart, fresh, 0, carry);
    handOver();
    bytes = fresh;
    // A full array holds about as many lines as the last one did.
    block = newBlock(fresh, arrayLines);
    arrayLines = 0;
    blockStarted = System.nanoTime();
    fill = carry;
    lineStart = 0;
  }

  /**
   * Hands the lines so far over; the next ones go into a new block over the same array. The sink
   * reads only the handed lines' bytes, which are never written again: new bytes go after them.
   */
  private void passOn(boolean atMaxLines) throws SourceException {
    handOver();
    // After MAX_BLOCK_LINES few lines are left in this array; else the next read brings about as
    // many lines as the last.
    block = newBlock(bytes, atMaxLines ? 16 : lastLines);
    blockStarted = System.nanoTime();
  }

  private void handOver() throws SourceException {
    // Called only when no more lines go into this block (next() or passOn() starts a new one):
    // the sink may keep it.
    if (block.count() > 0) {
      lastLines = block.count();
      arrayLines += block.count();
      sink.lines(block);
    }
  }

  /**
   * A block over {@code array} with offsets for about {@code expected} lines (sized by the lines
   * seen, not the bytes), at most {@link #MAX_BLOCK_LINES}: they grow by doubling up to it.
   */
  private static LineBlock newBlock(byte[] array, int expected) {
    return new LineBlock(array, Math.max(16, Math.min(MAX_BLOCK_LINES, expected + expected / 8)));
  }
}
