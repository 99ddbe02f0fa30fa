package io.bloomoperator.lookup;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import io.bloomoperator.snapshot.KeyType;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The keys of one request, parsed within the bounds of the API: they are checked while the body is
 * read, so a request over a bound costs at most the bound in memory and time, never what the client
 * sent. Holds String keys or long keys, after the filter's key type.
 */
final class KeyBatch {

  /** The most keys one batch may hold (413 beyond). */
  static final int MAX_KEYS = 10_000;

  /** The largest batch body, in bytes (413 beyond). */
  static final int MAX_BODY_BYTES = 1 << 20;

  /** The longest key, in UTF-8 bytes (400 beyond). */
  static final int MAX_KEY_BYTES = 64 << 10;

  private static final JsonFactory JSON = new JsonFactory();

  private final List<String> strings;
  private final long[] longs;
  private final int size;

  private KeyBatch(List<String> strings, long[] longs, int size) {
    this.strings = strings;
    this.longs = longs;
    this.size = size;
  }

  int size() {
    return size;
  }

  /** The String keys, for a String filter. */
  String[] strings() {
    return strings.toArray(new String[0]);
  }

  /** The long keys, for a Long filter. */
  long[] longs() {
    return longs;
  }

  /** A single key from the query string, checked like a batch key. */
  static KeyBatch single(String key, KeyType keyType) {
    checkLength(utf8Length(key));
    Builder builder = new Builder(keyType);
    builder.add(key);
    return builder.build();
  }

  /** A newline-delimited body: one key a line, a final newline optional, CR before LF dropped. */
  static KeyBatch fromLines(InputStream body, KeyType keyType) throws IOException {
    byte[] bytes = readBounded(body);
    Builder builder = new Builder(keyType);
    int start = 0;
    for (int i = 0; i <= bytes.length; i++) {
      if (i == bytes.length && start == bytes.length) {
        break; // the body ended with a newline, or was empty
      }
      if (i == bytes.length || bytes[i] == '\n') {
        int end = i > start && bytes[i - 1] == '\r' ? i - 1 : i;
        checkLength(end - start);
        builder.add(decodeUtf8(bytes, start, end - start));
        start = i + 1;
      }
    }
    return builder.build();
  }

  /**
   * A JSON array of keys: strings, or for a Long filter also integers. Parsed as a stream, so the
   * key count is known before the body was read to its end.
   */
  static KeyBatch fromJson(InputStream body, KeyType keyType) throws IOException {
    Builder builder = new Builder(keyType);
    try (JsonParser parser = JSON.createParser(new BoundedInputStream(body, MAX_BODY_BYTES))) {
      if (parser.nextToken() != JsonToken.START_ARRAY) {
        throw LookupException.badRequest("a JSON body must be an array of keys");
      }
      for (JsonToken token = parser.nextToken();
          token != JsonToken.END_ARRAY;
          token = parser.nextToken()) {
        if (token == JsonToken.VALUE_STRING) {
          String key = parser.getText();
          checkLength(utf8Length(key));
          builder.add(key);
        } else if (token == JsonToken.VALUE_NUMBER_INT && keyType == KeyType.LONG) {
          try {
            builder.addLong(parser.getLongValue());
          } catch (InputCoercionException e) {
            throw LookupException.badRequest(
                "a Long key is out of range (-2^63 to 2^63-1)"); // the key is not repeated
          }
        } else if (token == null) {
          throw LookupException.badRequest("the JSON array is not closed");
        } else {
          throw LookupException.badRequest(
              keyType == KeyType.LONG
                  ? "keys of a Long filter are decimal integers or strings of one"
                  : "keys of a String filter are JSON strings");
        }
      }
      if (parser.nextToken() != null) {
        throw LookupException.badRequest("nothing may follow the JSON array");
      }
    } catch (JsonParseException e) {
      // Jackson's message quotes the body's text, which is not repeated.
      throw LookupException.badRequest("the body is not a JSON array of keys");
    }
    return builder.build();
  }

  /** Reads at most {@link #MAX_BODY_BYTES}; one byte more is a 413, and no more is read. */
  private static byte[] readBounded(InputStream body) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream(8192);
    new BoundedInputStream(body, MAX_BODY_BYTES).transferTo(out);
    return out.toByteArray();
  }

  private static void checkLength(int utf8Bytes) {
    if (utf8Bytes > MAX_KEY_BYTES) {
      throw LookupException.badRequest(
          "a key is longer than " + MAX_KEY_BYTES + " bytes (" + utf8Bytes + ")");
    }
  }

  private static String decodeUtf8(byte[] bytes, int offset, int length) {
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes, offset, length))
          .toString();
    } catch (CharacterCodingException e) {
      throw LookupException.badRequest("a key is not valid UTF-8");
    }
  }

  /** The query value's bytes, percent-decoded ('+' is a space), as strict UTF-8. */
  static String decodeQueryValue(String raw) {
    byte[] bytes = new byte[raw.length()];
    int n = 0;
    for (int i = 0; i < raw.length(); i++) {
      char c = raw.charAt(i);
      if (c == '%') {
        if (i + 2 >= raw.length()) {
          throw LookupException.badRequest("a '%' in the query is not followed by two hex digits");
        }
        int hi = Character.digit(raw.charAt(i + 1), 16);
        int lo = Character.digit(raw.charAt(i + 2), 16);
        if (hi < 0 || lo < 0 || raw.charAt(i + 1) > 'f' || raw.charAt(i + 2) > 'f') {
          throw LookupException.badRequest("a '%' in the query is not followed by two hex digits");
        }
        bytes[n++] = (byte) (hi << 4 | lo);
        i += 2;
      } else if (c == '+') {
        bytes[n++] = ' ';
      } else if (c < 0x80) {
        bytes[n++] = (byte) c;
      } else {
        throw LookupException.badRequest("the query holds a character that is not percent-encoded");
      }
    }
    return decodeUtf8(bytes, 0, n);
  }

  /** Strict decimal: an optional '-', then ASCII digits only (no '+', no other scripts' digits). */
  static long parseDecimal(String key) {
    int start = key.startsWith("-") ? 1 : 0;
    boolean digits = key.length() > start && key.length() <= 20;
    for (int i = start; digits && i < key.length(); i++) {
      char c = key.charAt(i);
      digits = c >= '0' && c <= '9';
    }
    if (digits) {
      try {
        return Long.parseLong(key);
      } catch (NumberFormatException e) {
        // out of range, reported below
      }
    }
    throw LookupException.badRequest(
        "a Long filter's keys are decimal integers from -2^63 to 2^63-1, got '"
            + (key.length() > 40 ? key.substring(0, 40) + "..." : key)
            + "'");
  }

  static int utf8Length(CharSequence s) {
    int length = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        length += 1;
      } else if (c < 0x800) {
        length += 2;
      } else if (Character.isHighSurrogate(c)
          && i + 1 < s.length()
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        length += 4;
        i++;
      } else {
        length += 3;
      }
    }
    return length;
  }

  /** Collects keys of one type, refusing the one past {@link #MAX_KEYS}. */
  private static final class Builder {
    private final KeyType keyType;
    private final List<String> strings;
    private long[] longs;
    private int size;

    Builder(KeyType keyType) {
      this.keyType = keyType;
      this.strings = keyType == KeyType.STRING ? new ArrayList<>() : null;
      this.longs = keyType == KeyType.LONG ? new long[16] : null;
    }

    void add(String key) {
      if (keyType == KeyType.LONG) {
        addLong(parseDecimal(key));
      } else {
        count();
        strings.add(key);
      }
    }

    void addLong(long key) {
      count();
      if (size > longs.length) {
        longs = java.util.Arrays.copyOf(longs, Math.min(MAX_KEYS, longs.length * 2));
      }
      longs[size - 1] = key;
    }

    private void count() {
      if (++size > MAX_KEYS) {
        throw LookupException.tooLarge("a batch holds at most " + MAX_KEYS + " keys");
      }
    }

    KeyBatch build() {
      return new KeyBatch(
          strings, longs == null ? null : java.util.Arrays.copyOf(longs, size), size);
    }
  }

  /** Counts what is read and refuses the byte past the bound, before reading further. */
  static final class BoundedInputStream extends InputStream {
    private final InputStream in;
    private final long limit;
    private long read;

    BoundedInputStream(InputStream in, long limit) {
      this.in = in;
      this.limit = limit;
    }

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      // Ask for at most one byte past the bound: enough to know it was exceeded.
      int n = in.read(b, off, (int) Math.min(len, limit + 1 - read));
      if (n > 0) {
        read += n;
        if (read > limit) {
          throw LookupException.tooLarge("a batch body is at most " + limit + " bytes");
        }
      }
      return n;
    }

    @Override
    public void close() {
      // The exchange owns the stream.
    }
  }
}
