package io.bloomoperator.source;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.snapshot.KeyType;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Bodies parsed in bulk from their bytes ({@link LineParser#lines}) give exactly what the same body
 * gives line by line as Strings (the path every text source took before): the same keys (a String
 * key's UTF-8 bytes are those of the String), counts, malformed positions and failures.
 */
class BlockParsingTest {

  private static final int MAX_LINE = 64;

  @Test
  void trickyLinesParseAsTheirStringsDo() throws IOException {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    write(body, "\ufeffa\r\nb\rc\n\n\r\n  d  \n#x\n \t\u000bk\u001f\n\r\r\n");
    write(body, "ключ\n  日本  \n\u2003x\u2003\n\u00a0nbsp\n\u3000y\n\u0085z\n\u2028p\u2029\n");
    write(body, "😀\n#\u2003\n\u2003#c\n\u1680\n");
    body.write(bytes(0xff, '\n', 0xc0, 0x80, '\n', 0xe0, 0x80, 0x80, '\n', 0xed, 0xa0, 0x80, '\n'));
    body.write(bytes(0xf4, 0x90, 0x80, 0x80, '\n', 'a', 'b', 0xe2, 0x82, '\n', 0x80, '\n'));
    body.write(bytes(0xf0, 0x9f, 0x98, 0x80, '\n', ' ', 0xc3, 0xa9, ' ', '\n', 0xf5, 0x80, '\n'));
    body.write(bytes(0xed, 0x9f, 0xbf, '\n', 0xee, 0x80, 0x80, '\n', 0xef, 0xbf, 0xbd, '\n'));
    write(body, "+5\n-0\n+\n-\n0x10\n١٢٣\n１２\n9223372036854775807\n9223372036854775808\n");
    write(body, "-9223372036854775808\n-9223372036854775809\n 42 \n4 2\n\u2003 7\n007\n--1\n+-1\n");
    write(body, "x".repeat(MAX_LINE) + "\n" + "é".repeat(MAX_LINE / 2) + "\nlast-without-newline");
    for (KeyType type : KeyType.values()) {
      assertSameOutcome(body.toByteArray(), type, Long.MAX_VALUE, 1);
    }
  }

  @Test
  void aBomLaterInTheBodyIsPartOfTheKey() throws IOException {
    byte[] body = ("a\n\ufeffb\n").getBytes(StandardCharsets.UTF_8);
    assertSameOutcome(body, KeyType.STRING, 0, 1);
  }

  @Test
  void anOverlongLineFailsAfterTheLinesBeforeIt() {
    String body = "1\nnot-a-number\n" + "2".repeat(MAX_LINE + 1) + "\n";
    // The malformed line comes first: its failure wins, as line by line.
    assertSameOutcome(body.getBytes(StandardCharsets.UTF_8), KeyType.LONG, 0, 1);
    assertSameOutcome(body.getBytes(StandardCharsets.UTF_8), KeyType.LONG, 1, 1);
  }

  @Test
  void randomBodiesInRandomReadSizesParseAsTheirStringsDo() throws IOException {
    Random random = new Random(20);
    String[] pieces = {
      "a", "Z", "9", "0", "-", "+", " ", "\t", "#", "é", "日", "😀", "\u2003", "\u00a0", "١", "\r",
      "\n", "\r\n", "\n\n"
    };
    byte[][] invalid = {bytes(0xff), bytes(0xc0, 0xaf), bytes(0xed, 0xb0, 0x80), bytes(0xe2, 0x82)};
    for (int round = 0; round < 6; round++) {
      ByteArrayOutputStream body = new ByteArrayOutputStream();
      // Several 256 KiB blocks, so lines and CR LF pairs cross block boundaries.
      while (body.size() < 700_000) {
        int r = random.nextInt(100);
        if (r < 40) {
          write(body, Long.toString(random.nextLong() >> random.nextInt(64)));
        } else if (r < 42) {
          body.write(invalid[random.nextInt(invalid.length)]);
        } else {
          write(body, pieces[random.nextInt(pieces.length)]);
        }
        if (random.nextInt(3) == 0) {
          write(body, random.nextBoolean() ? "\n" : "\r\n");
        }
      }
      for (KeyType type : KeyType.values()) {
        assertSameOutcome(body.toByteArray(), type, Long.MAX_VALUE, 1 + random.nextInt(5000), 4096);
        assertSameOutcome(
            body.toByteArray(), type, random.nextInt(3000), 1 + random.nextInt(9000), 4096);
        // Overlong lines too: the failure comes at the same line.
        assertSameOutcome(body.toByteArray(), type, Long.MAX_VALUE, 1 + random.nextInt(5000), 40);
      }
    }
  }

  /**
   * A source that sends a few keys and then nothing for a while must have delivered them: the
   * build's stall check counts delivered keys, and would stop a slow but steady source whose keys
   * sat in an unfilled block.
   */
  @Test
  void linesOfASlowSourceArriveBeforeTheBlockIsFull() throws Exception {
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.atomic.AtomicLong delivered = new java.util.concurrent.atomic.AtomicLong();
    InputStream slow =
        new InputStream() {
          private final byte[] lines = "a\nb\nc\n".getBytes(StandardCharsets.UTF_8);
          private int sent;

          @Override
          public int read() {
            throw new UnsupportedOperationException();
          }

          @Override
          public int read(byte[] b, int off, int len) throws IOException {
            if (sent < lines.length) {
              int n = Math.min(len, lines.length - sent);
              System.arraycopy(lines, sent, b, off, n);
              sent += n;
              return n;
            }
            try {
              release.await();
            } catch (InterruptedException e) {
              throw new IOException(e);
            }
            return -1;
          }
        };
    Thread reader =
        new Thread(
            () -> {
              try {
                BoundedLines.stream(
                    slow,
                    MAX_LINE,
                    "X",
                    new KeySink() {
                      @Override
                      public void line(String rawLine) {
                        delivered.incrementAndGet();
                      }

                      @Override
                      public void value(String key) {}

                      @Override
                      public void value(long key) {}

                      @Override
                      public void nullValue() {}
                    });
              } catch (IOException | SourceException e) {
                throw new IllegalStateException(e);
              }
            });
    reader.start();
    long deadline = System.nanoTime() + 3_000_000_000L;
    while (delivered.get() < 3 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    long seen = delivered.get();
    release.countDown();
    reader.join();
    assertThat(seen).as("lines delivered while the source was quiet").isEqualTo(3);
  }

  private static void assertSameOutcome(
      byte[] body, KeyType type, long maxMalformed, int readSize) {
    assertSameOutcome(body, type, maxMalformed, readSize, MAX_LINE);
  }

  private static void assertSameOutcome(
      byte[] body, KeyType type, long maxMalformed, int readSize, int maxLine) {
    Outcome bulk = new Outcome(type, maxMalformed, maxLine);
    Outcome lineByLine = new Outcome(type, maxMalformed, maxLine);
    bulk.read(body, readSize, bulk.parser);
    // Without a lines() of its own, a sink gets every line as the String a reader would make.
    lineByLine.read(
        body,
        readSize,
        new KeySink() {
          @Override
          public void line(String rawLine) throws SourceException {
            lineByLine.parser.line(rawLine);
          }

          @Override
          public void value(String key) {}

          @Override
          public void value(long key) {}

          @Override
          public void nullValue() {}
        });
    assertThat(bulk.failure).isEqualTo(lineByLine.failure);
    if (lineByLine.failure == null) {
      assertThat(lineByLine.keys).isNotEmpty();
      assertThat(bulk.keys).isEqualTo(lineByLine.keys);
    } else {
      // A block is parsed whole before its count is merged: keys after the failing line may have
      // been inserted too, into a filter the failed build then drops.
      assertThat(bulk.keys.subList(0, lineByLine.keys.size())).isEqualTo(lineByLine.keys);
    }
    if (lineByLine.failure == null) {
      assertThat(bulk.parser.keys()).isEqualTo(lineByLine.parser.keys());
      assertThat(bulk.parser.malformed()).isEqualTo(lineByLine.parser.malformed());
    }
  }

  /** What one way of reading a body produced. */
  private static final class Outcome {
    final List<Object> keys = new ArrayList<>();
    final LineParser parser;
    final int maxLine;
    String failure;

    Outcome(KeyType type, long maxMalformed, int maxLine) {
      this.maxLine = maxLine;
      parser =
          new LineParser(
              type,
              new LineParser.KeyConsumer() {
                // Keys as the bytes that get hashed, so a key that decodes alike but hashes
                // differently (e.g. an encoded surrogate vs U+FFFD) shows.
                @Override
                public void putString(String key) {
                  keys.add(HexFormat.of().formatHex(key.getBytes(StandardCharsets.UTF_8)));
                }

                @Override
                public void putLong(long key) {
                  keys.add(key);
                }

                @Override
                public void putUtf8(byte[] utf8, int offset, int length) {
                  keys.add(HexFormat.of().formatHex(utf8, offset, offset + length));
                }
              },
              maxMalformed);
    }

    void read(byte[] body, int readSize, KeySink sink) {
      try (InputStream in = new SmallReads(new ByteArrayInputStream(body), readSize)) {
        BoundedLines.stream(in, maxLine, "X", sink);
      } catch (SourceException e) {
        failure = e.reason() + ": " + e.getMessage();
      } catch (IOException e) {
        failure = e.getClass().getSimpleName() + ": " + e.getMessage();
      }
    }
  }

  /** Returns at most {@code size} bytes per read, as a network stream does. */
  private static final class SmallReads extends FilterInputStream {
    private final int size;

    SmallReads(InputStream in, int size) {
      super(in);
      this.size = size;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      return super.read(b, off, Math.min(len, size));
    }
  }

  private static void write(ByteArrayOutputStream out, String text) {
    out.writeBytes(text.getBytes(StandardCharsets.UTF_8));
  }

  private static byte[] bytes(int... values) {
    byte[] out = new byte[values.length];
    for (int i = 0; i < values.length; i++) {
      out[i] = (byte) values[i];
    }
    return out;
  }
}
