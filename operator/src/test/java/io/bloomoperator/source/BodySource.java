package io.bloomoperator.source;

import io.bloomoperator.api.Reasons;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.function.Supplier;

/**
 * A text body read as the http source reads one (split into lines by {@link BoundedLines}, handed
 * over in {@link LineBlock}s), without a server, for tests and benchmarks of the parsing and build
 * path.
 */
public final class BodySource implements KeySource {

  private final Supplier<InputStream> body;
  private final int maxLineBytes;

  private BodySource(Supplier<InputStream> body, int maxLineBytes) {
    this.body = body;
    this.maxLineBytes = maxLineBytes;
  }

  /** The body {@code bytes}, lines of at most {@code maxLineBytes}. */
  public static BodySource of(byte[] bytes, int maxLineBytes) {
    return new BodySource(() -> new ByteArrayInputStream(bytes), maxLineBytes);
  }

  /** {@code prefix-0\n … prefix-(n-1)\n}, generated while read (never held). */
  public static BodySource generated(String prefix, long n) {
    return new BodySource(() -> new GeneratedLines(prefix, n), 64 * 1024);
  }

  /** Any stream, opened anew for every read. */
  public static BodySource of(Supplier<InputStream> body, int maxLineBytes) {
    return new BodySource(body, maxLineBytes);
  }

  @Override
  public String description() {
    return "test body";
  }

  @Override
  public String changeToken() {
    return null;
  }

  @Override
  public void readKeys(KeySink sink) throws SourceException {
    try (InputStream in = body.get()) {
      BoundedLines.stream(in, maxLineBytes, "TEST_MAX_LINE_BYTES", sink);
    } catch (BodyLimitExceeded e) {
      throw new SourceException(Reasons.SOURCE_LIMIT_EXCEEDED, e.getMessage());
    } catch (IOException e) {
      throw new SourceException(Reasons.SOURCE_UNREADABLE, "read failed: " + e.getMessage(), e);
    }
  }
}
