package io.bloomoperator.source;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Splits a UTF-8 byte stream into lines as {@link java.io.BufferedReader#readLine()} does ({@code
 * \n}, {@code \r\n} or {@code \r} ends a line; a leading byte order mark is dropped), but with a
 * maximum line length: a longer line fails with {@link BodyLimitExceeded} as soon as the limit is
 * passed, so a body without newlines costs at most the limit, not the whole body. Invalid UTF-8
 * becomes U+FFFD, as with an {@code InputStreamReader}.
 */
final class BoundedLines {

  private static final int BUFFER = 256 * 1024;
  private static final byte[] BOM = {(byte) 0xef, (byte) 0xbb, (byte) 0xbf};

  private final int maxLineBytes;
  private final String setting;
  private final KeySink sink;
  private byte[] line;
  private int length;
  private long lineNumber = 1;
  private boolean afterCr;

  private BoundedLines(int maxLineBytes, String setting, KeySink sink) {
    this.maxLineBytes = maxLineBytes;
    this.setting = setting;
    this.sink = sink;
    this.line = new byte[Math.min(maxLineBytes, 256)];
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
      feed(start, start.length);
    }
    byte[] buffer = new byte[BUFFER];
    int n;
    while ((n = in.read(buffer)) >= 0) {
      feed(buffer, n);
    }
    if (length > 0) {
      sink.line(new String(line, 0, length, StandardCharsets.UTF_8));
    }
  }

  private void feed(byte[] bytes, int n) throws BodyLimitExceeded, SourceException {
    for (int i = 0; i < n; i++) {
      byte b = bytes[i];
      if (b == '\n' || b == '\r') {
        if (b == '\r' || !afterCr) {
          sink.line(new String(line, 0, length, StandardCharsets.UTF_8));
          lineNumber++;
          length = 0;
        }
        afterCr = b == '\r';
        continue;
      }
      afterCr = false;
      if (length == maxLineBytes) {
        throw new BodyLimitExceeded(
            "line " + lineNumber + " is longer than " + maxLineBytes + " bytes", setting);
      }
      if (length == line.length) {
        line = Arrays.copyOf(line, (int) Math.min(maxLineBytes, 2L * line.length));
      }
      line[length++] = b;
    }
  }
}
