package io.bloomoperator.changes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** pgoutput messages, made by hand as the protocol documents them, and malformed ones. */
class PgOutputTest {

  @Test
  void decodesAnInsertAndACommit() throws Exception {
    ByteBuffer insert = ByteBuffer.allocate(64);
    insert.put((byte) 'I').putInt(16384).put((byte) 'N').putShort((short) 2);
    byte[] key = "sku-1".getBytes(StandardCharsets.UTF_8);
    insert.put((byte) 't').putInt(key.length).put(key).put((byte) 'n');
    insert.flip();
    PgOutput.Row row = (PgOutput.Row) PgOutput.decode(insert);
    assertThat(row.relation()).isEqualTo(16384);
    assertThat(row.values().get(0).string()).isEqualTo("sku-1");
    assertThat(row.values().get(1).kind()).isEqualTo(PgOutput.Value.Kind.NULL);

    ByteBuffer commit = ByteBuffer.allocate(26);
    commit.put((byte) 'C').put((byte) 0).putLong(100).putLong(180).putLong(0).flip();
    PgOutput.Commit c = (PgOutput.Commit) PgOutput.decode(commit);
    assertThat(c.endLsn()).isEqualTo(180);
    assertThat(c.at()).isEqualTo(java.time.Instant.parse("2000-01-01T00:00:00Z"));
  }

  @Test
  void lengthsAndCountsBeyondTheMessageAreMalformedNotAllocated() {
    ByteBuffer value = ByteBuffer.allocate(16);
    value.put((byte) 'I').putInt(1).put((byte) 'N').putShort((short) 1);
    value.put((byte) 't').putInt(Integer.MAX_VALUE).flip();
    assertThatThrownBy(() -> PgOutput.decode(value)).isInstanceOf(PgOutput.Malformed.class);

    ByteBuffer columns = ByteBuffer.allocate(16);
    columns.put((byte) 'R').putInt(1).put((byte) 's').put((byte) 0).put((byte) 't').put((byte) 0);
    columns.put((byte) 'd').putShort((short) 0xffff).flip();
    assertThatThrownBy(() -> PgOutput.decode(columns)).isInstanceOf(PgOutput.Malformed.class);

    ByteBuffer truncate = ByteBuffer.allocate(10);
    truncate.put((byte) 'T').putInt(1_000_000).put((byte) 0).flip();
    assertThatThrownBy(() -> PgOutput.decode(truncate)).isInstanceOf(PgOutput.Malformed.class);

    ByteBuffer unknown = ByteBuffer.wrap(new byte[] {'X'});
    assertThatThrownBy(() -> PgOutput.decode(unknown)).isInstanceOf(PgOutput.Malformed.class);
  }
}
