package io.bloomoperator.assemble;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.snapshot.KeyInserter;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.source.BodySource;
import io.bloomoperator.source.GeneratedLines;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;

/**
 * The source data a build on several threads holds is bounded in bytes, whatever the length of its
 * lines (security audit 2026-12-02, H2): an http body of ~65,000-byte lines (a few under {@code
 * BLOOM_HTTP_MAX_LINE_BYTES}), gzip'ed (the source hands over full blocks) or in reads that report
 * nothing more available (blocks sharing one array), goes through {@code BoundedLines} and {@link
 * ParallelFill} holding at most {@code 2 × threads × (1 MiB + one block)}. Batches of 2,048 lines
 * held 2,048 × 64 KiB (and as much again of line offsets) each.
 */
class LongLinesHeldBytesTest {

  private static final int LINES = 2_500;

  /** Lines of 64,997 to 65,000 bytes: the filler, then the line's number. */
  private static final String FILLER = "x".repeat(64_996);

  /** One block at most: 256 KiB of text and 32,768 line offsets of 8 bytes (BoundedLines). */
  private static final long BLOCK = 256 * 1024 + 8 * 32 * 1024;

  @Test
  void longLinesKeepABuildWithinItsBytesOnAnyNumberOfThreads() throws Exception {
    byte[] gzip = gzip(new GeneratedLines(FILLER, LINES));
    Supplier<InputStream> gzipped =
        () -> {
          try {
            return new GZIPInputStream(new ByteArrayInputStream(gzip));
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        };
    Supplier<InputStream> plain = () -> new GeneratedLines(FILLER, LINES);
    FilterBuilder.Request request =
        new FilterBuilder.Request(KeyType.STRING, 0.01, (long) LINES, 0, 1L << 30);
    FilterBuilder.Result one =
        new FilterBuilder().build(BodySource.of(gzipped, 64 * 1024), request);
    assertThat(one.keys()).isEqualTo(LINES);

    for (Supplier<InputStream> body : List.of(gzipped, plain)) {
      for (int threads : new int[] {2, 4}) {
        FilterBuilder.Result built =
            new FilterBuilder(k -> {}, BuildWorkers.of(threads, 1))
                .build(BodySource.of(body, 64 * 1024), request);
        assertThat(built.bits()).as("bits on %d threads", threads).isEqualTo(one.bits());
        assertThat(built.keys()).isEqualTo(LINES);

        Set<Thread> inserters = ConcurrentHashMap.newKeySet();
        AtomicLong puts = new AtomicLong();
        KeyInserter counting = ParallelBuildTest.recording(inserters, puts);
        try (ParallelFill fill =
            new ParallelFill(
                KeyType.STRING,
                0,
                () -> ParallelFill.Inserters.of(counting),
                BuildWorkers.of(threads, 1),
                k -> {})) {
          BodySource.of(body, 64 * 1024).readKeys(fill);
          fill.finish();
          long bound = 2L * threads * (BlockBatch.BYTES + BLOCK);
          System.out.printf(
              "long lines, %d threads: peak held %d bytes (bound %d)%n",
              threads, fill.peakHeldBytes(), bound);
          assertThat(fill.peakHeldBytes())
              .as("bytes held on %d threads", threads)
              .isPositive()
              .isLessThanOrEqualTo(bound);
        }
        assertThat(puts.get()).isEqualTo(LINES);
        assertThat(inserters).as("threads that inserted keys").hasSizeGreaterThan(1);
      }
    }
  }

  private static byte[] gzip(InputStream body) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (GZIPOutputStream zip = new GZIPOutputStream(out, 64 * 1024);
        body) {
      body.transferTo(zip);
    }
    return out.toByteArray();
  }
}
