package io.bloomoperator.source;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * The bytes of {@code prefix0\n prefix1\n … prefix(n-1)\n}, made as they are read (a 1.3 GB body
 * costs no memory), cheap enough per byte not to bound the reader that parses them.
 */
public final class GeneratedLines extends InputStream {

  private final byte[] prefix;
  private final long end;
  private final byte[] digits = new byte[20];
  private long next;
  private byte[] line = new byte[0];
  private int lineLength;
  private int linePos;

  public GeneratedLines(String prefix, long n) {
    this(prefix, 0, n);
  }

  /**
   * The lines {@code prefix(first)} to {@code prefix(first + n - 1)}: a later {@code first} is the
   * same export with the lowest keys gone and as many new ones added, a refresh with a known churn.
   */
  public GeneratedLines(String prefix, long first, long n) {
    this.prefix = prefix.getBytes(StandardCharsets.UTF_8);
    this.next = first;
    this.end = first + n;
  }

  @Override
  public int read() {
    byte[] one = new byte[1];
    return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
  }

  @Override
  public int read(byte[] b, int off, int len) {
    if (len == 0) {
      return 0;
    }
    int written = 0;
    while (written < len) {
      if (linePos == lineLength) {
        if (next == end) {
          break;
        }
        makeLine(next++);
      }
      int take = Math.min(len - written, lineLength - linePos);
      System.arraycopy(line, linePos, b, off + written, take);
      linePos += take;
      written += take;
    }
    return written == 0 ? -1 : written;
  }

  private void makeLine(long value) {
    int d = digits.length;
    do {
      digits[--d] = (byte) ('0' + value % 10);
      value /= 10;
    } while (value > 0);
    int count = digits.length - d;
    lineLength = prefix.length + count + 1;
    if (line.length < lineLength) {
      line = new byte[lineLength + 8];
    }
    System.arraycopy(prefix, 0, line, 0, prefix.length);
    System.arraycopy(digits, d, line, prefix.length, count);
    line[lineLength - 1] = '\n';
    linePos = 0;
  }
}
