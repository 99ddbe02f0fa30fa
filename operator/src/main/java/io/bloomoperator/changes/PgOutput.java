package io.bloomoperator.changes;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Decodes the messages of PostgreSQL's {@code pgoutput} logical decoding plugin, protocol version 1
 * (PostgreSQL's "Logical Replication Message Formats"): Begin, Commit, Origin, Relation, Type,
 * Insert, Update, Delete and Truncate. Decoded here rather than by a library so that every length
 * and count the server sends is checked against what is left of the message (a message is already
 * bounded by {@link PgFrameBound}): a hostile server can make a message malformed, never make the
 * decoder allocate beyond it.
 *
 * <p>Tuple values are kept as the server's text form ({@code 't'}), or marked null ({@code 'n'}) or
 * unchanged-toasted ({@code 'u'}); binary values ({@code 'b'}) are only sent when asked for, which
 * the operator never does, and are refused.
 */
final class PgOutput {

  /** Microseconds between the Unix epoch and PostgreSQL's, 2000-01-01. */
  private static final long PG_EPOCH_MICROS = 946_684_800_000_000L;

  /** PostgreSQL's own limit on a table's columns; a message announcing more is malformed. */
  static final int MAX_COLUMNS = 1664;

  private PgOutput() {}

  /** A message the server sent does not follow the format; the stream cannot go on. */
  static final class Malformed extends Exception {
    Malformed(String message) {
      super(message);
    }
  }

  /** One decoded message. */
  sealed interface Message {}

  /** A transaction starts. */
  record Begin(long finalLsn) implements Message {}

  /**
   * A transaction is complete: every change before it was sent.
   *
   * @param endLsn the position after its commit record, where a read resumes
   */
  record Commit(long endLsn, Instant at) implements Message {}

  /** A table's description, sent before its first change in a session and after it changes. */
  record Relation(int id, String namespace, String name, List<String> columns) implements Message {}

  /** An inserted row ({@code Insert}) or the new row of an update ({@code Update}). */
  record Row(int relation, List<Value> values) implements Message {}

  /** A deleted row; only counted (deletions are applied by full builds). */
  record Delete(int relation) implements Message {}

  /** Tables truncated together. */
  record Truncate(List<Integer> relations) implements Message {}

  /** Origin and Type: nothing the stream uses. */
  record Other(char type) implements Message {}

  /** A column's value in a row. */
  record Value(Kind kind, byte[] text) {
    enum Kind {
      NULL,
      UNCHANGED_TOAST,
      TEXT
    }

    /** The text form, for a {@link Kind#TEXT} value. */
    String string() {
      return new String(text, StandardCharsets.UTF_8);
    }
  }

  /** Decodes one message (the payload of an XLogData message). */
  static Message decode(ByteBuffer in) throws Malformed {
    try {
      char type = (char) in.get();
      switch (type) {
        case 'B':
          long finalLsn = in.getLong();
          in.getLong(); // commit time
          in.getInt(); // xid
          return new Begin(finalLsn);
        case 'C':
          in.get(); // flags
          in.getLong(); // commit LSN
          long endLsn = in.getLong();
          long micros = in.getLong();
          return new Commit(endLsn, instant(micros));
        case 'R':
          return relation(in);
        case 'I':
          {
            int relation = in.getInt();
            expect(in, 'N');
            return new Row(relation, tuple(in));
          }
        case 'U':
          {
            int relation = in.getInt();
            byte next = in.get();
            if (next == 'K' || next == 'O') {
              tuple(in); // the old row's key or whole row: the new row says what to add
              next = in.get();
            }
            if (next != 'N') {
              throw new Malformed("an Update without its new row");
            }
            return new Row(relation, tuple(in));
          }
        case 'D':
          {
            int relation = in.getInt();
            byte old = in.get();
            if (old != 'K' && old != 'O') {
              throw new Malformed("a Delete without its old row");
            }
            tuple(in);
            return new Delete(relation);
          }
        case 'T':
          {
            int count = in.getInt();
            in.get(); // options (CASCADE, RESTART IDENTITY)
            if (count < 0 || count > in.remaining() / 4) {
              throw new Malformed("a Truncate of more relations than it holds");
            }
            List<Integer> relations = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
              relations.add(in.getInt());
            }
            return new Truncate(relations);
          }
        case 'O':
        case 'Y':
          return new Other(type);
        default:
          throw new Malformed("a message of an unknown type");
      }
    } catch (BufferUnderflowException e) {
      throw new Malformed("a message shorter than its contents");
    }
  }

  private static Relation relation(ByteBuffer in) throws Malformed {
    int id = in.getInt();
    String namespace = string(in);
    String name = string(in);
    in.get(); // replica identity setting
    int count = in.getShort() & 0xffff;
    if (count > MAX_COLUMNS) {
      throw new Malformed("a Relation of more columns than PostgreSQL allows");
    }
    List<String> columns = new ArrayList<>(Math.min(count, in.remaining()));
    for (int i = 0; i < count; i++) {
      in.get(); // flags: part of the key
      columns.add(string(in));
      in.getInt(); // type
      in.getInt(); // type modifier
    }
    return new Relation(id, namespace, name, List.copyOf(columns));
  }

  private static List<Value> tuple(ByteBuffer in) throws Malformed {
    int count = in.getShort() & 0xffff;
    if (count > MAX_COLUMNS) {
      throw new Malformed("a row of more columns than PostgreSQL allows");
    }
    List<Value> values = new ArrayList<>(Math.min(count, in.remaining()));
    for (int i = 0; i < count; i++) {
      byte kind = in.get();
      switch (kind) {
        case 'n' -> values.add(new Value(Value.Kind.NULL, null));
        case 'u' -> values.add(new Value(Value.Kind.UNCHANGED_TOAST, null));
        case 't' -> {
          int length = in.getInt();
          if (length < 0 || length > in.remaining()) {
            throw new Malformed("a value longer than its message");
          }
          byte[] text = new byte[length];
          in.get(text);
          values.add(new Value(Value.Kind.TEXT, text));
        }
        default -> throw new Malformed("a value of an unknown kind");
      }
    }
    return values;
  }

  private static String string(ByteBuffer in) throws Malformed {
    int start = in.position();
    int end = start;
    while (end < in.limit() && in.get(end) != 0) {
      end++;
    }
    if (end == in.limit()) {
      throw new Malformed("a name without its end");
    }
    byte[] bytes = new byte[end - start];
    in.get(bytes);
    in.get(); // the terminating zero
    return new String(bytes, StandardCharsets.UTF_8);
  }

  private static void expect(ByteBuffer in, char marker) throws Malformed {
    if (in.get() != marker) {
      throw new Malformed("a row without its marker");
    }
  }

  private static Instant instant(long pgMicros) {
    long micros = pgMicros + PG_EPOCH_MICROS;
    return Instant.ofEpochSecond(
        Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1000);
  }
}
