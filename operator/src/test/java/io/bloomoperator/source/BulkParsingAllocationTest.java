package io.bloomoperator.source;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.snapshot.KeyType;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/** What parsing an http body costs in memory. Uses only API that line-by-line parsing had too. */
class BulkParsingAllocationTest {

  private static final int MAX_LINE = 64;

  /**
   * The point of parsing in bulk: an http body costs its bytes (blocks of them), not a String per
   * key. Short keys (6–8 bytes) made a String of ~48 bytes each, 6 times the body.
   */
  @Test
  void aBodyIsParsedWithoutAStringPerKey() throws Exception {
    int n = 1_000_000;
    byte[] body;
    try (InputStream in = new GeneratedLines("k", n)) {
      body = in.readAllBytes();
    }
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    BoundedLines.stream(new ByteArrayInputStream(body), MAX_LINE, "X", discarding()); // warm-up
    LineParser parser = discarding();
    long before = threads.getCurrentThreadAllocatedBytes();
    BoundedLines.stream(new ByteArrayInputStream(body), MAX_LINE, "X", parser);
    long allocated = threads.getCurrentThreadAllocatedBytes() - before;
    assertThat(parser.keys()).isEqualTo(n);
    assertThat(allocated)
        .as("bytes allocated for a %d-byte body", body.length)
        .isLessThan(3L * body.length);
  }

  private static LineParser discarding() {
    return new LineParser(
        KeyType.STRING,
        new LineParser.KeyConsumer() {
          @Override
          public void putString(String key) {}

          @Override
          public void putLong(long key) {}

          // No @Override: the same test compiles against a parser without a bytes path.
          public void putUtf8(byte[] utf8, int offset, int length) {}
        },
        0);
  }
}
