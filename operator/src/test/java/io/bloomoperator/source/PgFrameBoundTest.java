package io.bloomoperator.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** The message bound of PostgreSQL replication connections, on hand-made protocol streams. */
class PgFrameBoundTest {

  private static byte[] frame(char type, int bodyBytes) {
    ByteBuffer b = ByteBuffer.allocate(5 + bodyBytes);
    b.put((byte) type).putInt(4 + bodyBytes);
    return b.array();
  }

  private static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }

  private static int drain(InputStream in, int chunk) throws IOException {
    byte[] buffer = new byte[chunk];
    int total = 0;
    for (int n; (n = in.read(buffer, 0, chunk)) >= 0; ) {
      total += n;
    }
    return total;
  }

  @Test
  void framesWithinTheBoundPassWhateverTheReadSizes() throws IOException {
    byte[] stream = concat(frame('R', 8), frame('d', 100), frame('Z', 1), frame('d', 0));
    for (int chunk : new int[] {1, 3, 7, 64, 8192}) {
      assertThat(drain(new PgFrameBound(new ByteArrayInputStream(stream), 100, false), chunk))
          .isEqualTo(stream.length);
    }
  }

  @Test
  void aLargerAnnouncedMessageFailsBeforeItsLengthIsHandedOn() {
    byte[] stream = concat(frame('d', 10), frame('d', 101));
    for (int chunk : new int[] {1, 2, 5, 8192}) {
      PgFrameBound in = new PgFrameBound(new ByteArrayInputStream(stream), 100, false);
      assertThatThrownBy(() -> drain(in, chunk))
          .isInstanceOf(IOException.class)
          .hasMessageContaining("larger than the operator's limit");
    }
    // A negative or impossible length (a hostile server's 2 GiB and more) fails the same way.
    byte[] negative = {'d', (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xf0};
    assertThatThrownBy(
            () -> drain(new PgFrameBound(new ByteArrayInputStream(negative), 100, false), 8))
        .isInstanceOf(IOException.class);
  }

  @Test
  void theAnswerToAnSslRequestIsNoMessage() throws IOException {
    byte[] plain = concat(new byte[] {'N'}, frame('R', 8), frame('d', 50));
    assertThat(drain(new PgFrameBound(new ByteArrayInputStream(plain), 100, true), 4))
        .isEqualTo(plain.length);
    // After 'S' the bytes are TLS records: passed on unparsed (the bound is applied above TLS).
    byte[] tls = concat(new byte[] {'S'}, frame('d', 5000));
    assertThat(drain(new PgFrameBound(new ByteArrayInputStream(tls), 100, true), 4))
        .isEqualTo(tls.length);
  }
}
