package io.bloomoperator.source;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * Fails with {@link BodyLimitExceeded} once more than a given number of bytes were read: placed
 * after decompression, it stops a small gzip that inflates to terabytes (a gzip bomb) after the
 * limit, not when the disk or the CPU budget is gone.
 */
final class BoundedInputStream extends FilterInputStream {

  private final BodyBudget budget;

  BoundedInputStream(InputStream in, long limit, String setting) {
    this(in, new BodyBudget(limit, setting, 1));
  }

  /** Counting against {@code budget}, which other bodies may share. */
  BoundedInputStream(InputStream in, BodyBudget budget) {
    super(in);
    this.budget = budget;
  }

  @Override
  public int read() throws IOException {
    int b = super.read();
    if (b >= 0) {
      count(1);
    }
    return b;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    // Never ask for more than one byte past the limit: enough to tell that it is exceeded.
    int n = super.read(b, off, (int) Math.min(len, Math.max(0, budget.left()) + 1));
    if (n > 0) {
      count(n);
    }
    return n;
  }

  @Override
  public long skip(long n) throws IOException {
    long skipped = super.skip(Math.min(n, Math.max(0, budget.left()) + 1));
    count(skipped);
    return skipped;
  }

  @Override
  public boolean markSupported() {
    return false;
  }

  private void count(long n) throws BodyLimitExceeded {
    budget.take(n);
  }
}
