package io.bloomoperator.source;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * Refuses any PostgreSQL backend message announcing more than {@code limit} bytes, before PgJDBC
 * sees its length. PgJDBC allocates each CopyData message whole from its announced length ({@code
 * PGStream.receive(int)}), whatever {@code maxResultBuffer} says, so on a replication connection
 * the server alone would decide how much heap one message takes: a publication widened behind the
 * operator's back (another table, a wide column) or a hostile server could announce up to 2 GiB.
 *
 * <p>The stream is parsed as the protocol frames it (a type byte, a 4-byte length that counts
 * itself, the body); every byte passed on has been through the parser, so an over-long length fails
 * the read that would have handed it to the driver. The answer to an SSLRequest is a single byte:
 * {@code N} (plain text follows, parsed as frames) or {@code S} (TLS follows: the encrypted bytes
 * are not frames, and the bound is applied again above TLS, by {@link BoundedSslFactory}).
 */
final class PgFrameBound extends FilterInputStream {

  private final long limit;
  private boolean awaitingSslAnswer;
  private boolean passThrough;

  /** Bytes of the current frame's header read: 0 (at a type byte) to 5 (header complete). */
  private int header;

  private int length;
  private long bodyLeft;

  /**
   * @param sslRequested whether the driver sends an SSLRequest first (its single-byte answer is not
   *     a frame)
   */
  PgFrameBound(InputStream in, long limit, boolean sslRequested) {
    super(in);
    this.limit = limit;
    this.awaitingSslAnswer = sslRequested;
  }

  @Override
  public int read() throws IOException {
    int b = super.read();
    if (b >= 0) {
      parse((byte) b);
    }
    return b;
  }

  @Override
  public int read(byte[] buffer, int offset, int count) throws IOException {
    int n = super.read(buffer, offset, count);
    for (int i = 0; i < n && !passThrough; i++) {
      if (header == 5 && bodyLeft > 0) {
        // Skip the body in one step: only headers are parsed.
        long skip = Math.min(bodyLeft, n - i);
        bodyLeft -= skip;
        i += (int) skip - 1;
        if (bodyLeft == 0) {
          header = 0;
        }
        continue;
      }
      parse(buffer[offset + i]);
    }
    return n;
  }

  @Override
  public long skip(long n) throws IOException {
    // Skipped bytes must be parsed too (PgJDBC skips a field it could not allocate).
    byte[] discard = new byte[(int) Math.min(Math.max(n, 0), 8192)];
    int read = read(discard, 0, discard.length);
    return Math.max(read, 0);
  }

  private void parse(byte b) throws IOException {
    if (passThrough) {
      return;
    }
    if (awaitingSslAnswer) {
      awaitingSslAnswer = false;
      if (b == 'S') {
        passThrough = true;
        return;
      }
      if (b == 'N') {
        return;
      }
      // An ErrorResponse instead of an answer: it is a frame.
    }
    if (header == 5) {
      if (--bodyLeft == 0) {
        header = 0;
      }
      return;
    }
    if (header == 0) {
      header = 1;
      length = 0;
      return;
    }
    length = (length << 8) | (b & 0xff);
    if (++header == 5) {
      long body = length - 4L;
      if (length < 4 || body > limit) {
        throw new IOException(
            "the server announced a message larger than the operator's limit ("
                + limit
                + " bytes)");
      }
      bodyLeft = body;
      if (bodyLeft == 0) {
        header = 0;
      }
    }
  }
}
