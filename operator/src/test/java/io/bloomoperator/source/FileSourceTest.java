package io.bloomoperator.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.KeyType;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileSourceTest {

  private static final String TEXT =
      "  sku-1  \n\n# a comment\n\tsku-2\r\n   \nsku #3\nlast-no-newline";

  @TempDir Path dir;

  private final List<Object> keys = new ArrayList<>();
  private final LineParser.KeyConsumer collect =
      new LineParser.KeyConsumer() {
        @Override
        public void putString(String key) {
          keys.add(key);
        }

        @Override
        public void putLong(long key) {
          keys.add(key);
        }
      };

  private static byte[] gzip(String text) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (OutputStream out = new GZIPOutputStream(bytes)) {
      out.write(text.getBytes(StandardCharsets.UTF_8));
    }
    return bytes.toByteArray();
  }

  @Test
  void readsPlainFileThroughTheLineRules() throws Exception {
    Path file = Files.writeString(dir.resolve("keys.txt"), TEXT);
    LineParser parser = new LineParser(KeyType.STRING, collect, 0);
    new FileSource(file).readKeys(parser);
    assertThat(keys).containsExactly("sku-1", "sku-2", "sku #3", "last-no-newline");
    assertThat(parser.keys()).isEqualTo(4);
  }

  @Test
  void readsGzipFileDetectedByMagicBytesNotName() throws Exception {
    // Named .txt on purpose: detection is by content.
    Path file = Files.write(dir.resolve("keys.txt"), gzip(TEXT));
    new FileSource(file).readKeys(new LineParser(KeyType.STRING, collect, 0));
    assertThat(keys).containsExactly("sku-1", "sku-2", "sku #3", "last-no-newline");
  }

  @Test
  void plainFileNamedGzIsReadAsText() throws Exception {
    Path file = Files.writeString(dir.resolve("keys.gz"), "a\nb\n");
    new FileSource(file).readKeys(new LineParser(KeyType.STRING, collect, 0));
    assertThat(keys).containsExactly("a", "b");
  }

  @Test
  void longKeysAndMalformedLinesFollowLineParser() throws Exception {
    Path file =
        Files.write(
            dir.resolve("ids.gz"), gzip("1\n-2\n# c\nnot-a-number\n 9223372036854775807 \n"));
    assertThatThrownBy(
            () -> new FileSource(file).readKeys(new LineParser(KeyType.LONG, collect, 0)))
        .isInstanceOf(SourceException.class)
        .satisfies(
            e -> assertThat(((SourceException) e).reason()).isEqualTo(Reasons.MALFORMED_KEYS))
        .hasMessageContaining("line 4 (12 characters)")
        .hasMessageNotContaining("not-a-number");

    keys.clear();
    LineParser tolerant = new LineParser(KeyType.LONG, collect, 1);
    new FileSource(file).readKeys(tolerant);
    assertThat(keys).containsExactly(1L, -2L, Long.MAX_VALUE);
    assertThat(tolerant.malformed()).isEqualTo(1);
  }

  @Test
  void isReReadable() throws Exception {
    Path file = Files.write(dir.resolve("keys.gz"), gzip("x\ny\n"));
    FileSource source = new FileSource(file);
    source.readKeys(new LineParser(KeyType.STRING, collect, 0));
    source.readKeys(new LineParser(KeyType.STRING, collect, 0));
    assertThat(keys).containsExactly("x", "y", "x", "y");
  }

  @Test
  void emptyFileYieldsNoKeys() throws Exception {
    Path file = Files.write(dir.resolve("empty.txt"), new byte[0]);
    LineParser parser = new LineParser(KeyType.STRING, collect, 0);
    new FileSource(file).readKeys(parser);
    assertThat(parser.keys()).isZero();
  }

  @Test
  void missingFileIsNotFoundNamingThePath() {
    Path missing = dir.resolve("nope/keys.txt");
    FileSource source = new FileSource(missing);
    assertThatThrownBy(() -> source.readKeys(new LineParser(KeyType.STRING, collect, 0)))
        .isInstanceOf(SourceException.class)
        .hasMessageContaining(missing.toString())
        .satisfies(
            e -> assertThat(((SourceException) e).reason()).isEqualTo(Reasons.SOURCE_NOT_FOUND));
    assertThatThrownBy(source::changeToken)
        .isInstanceOf(SourceException.class)
        .satisfies(
            e -> assertThat(((SourceException) e).reason()).isEqualTo(Reasons.SOURCE_NOT_FOUND));
  }

  @Test
  void directoryAndInvalidUtf8AndTruncatedGzipAreUnreadable() throws Exception {
    assertThatThrownBy(
            () -> new FileSource(dir).readKeys(new LineParser(KeyType.STRING, collect, 0)))
        .isInstanceOf(SourceException.class)
        .hasMessageContaining("directory")
        .satisfies(
            e -> assertThat(((SourceException) e).reason()).isEqualTo(Reasons.SOURCE_UNREADABLE));

    Path latin1 =
        Files.write(dir.resolve("latin1.txt"), new byte[] {'c', 'a', 'f', (byte) 0xE9, '\n'});
    assertThatThrownBy(
            () -> new FileSource(latin1).readKeys(new LineParser(KeyType.STRING, collect, 0)))
        .isInstanceOf(SourceException.class)
        .hasMessageContaining(latin1.toString())
        .satisfies(
            e -> assertThat(((SourceException) e).reason()).isEqualTo(Reasons.SOURCE_UNREADABLE));

    byte[] full = gzip("a\n".repeat(10_000));
    Path truncated =
        Files.write(dir.resolve("truncated.gz"), java.util.Arrays.copyOf(full, full.length / 2));
    assertThatThrownBy(
            () -> new FileSource(truncated).readKeys(new LineParser(KeyType.STRING, collect, 0)))
        .isInstanceOf(SourceException.class)
        .satisfies(
            e -> assertThat(((SourceException) e).reason()).isEqualTo(Reasons.SOURCE_UNREADABLE));
  }

  @Test
  void changeTokenChangesWithContent() throws Exception {
    Path file = Files.writeString(dir.resolve("keys.txt"), "a\n");
    FileSource source = new FileSource(file);
    String before = source.changeToken();
    Files.writeString(file, "a\nb\n");
    assertThat(source.changeToken()).isNotEqualTo(before);
    assertThat(source.description()).contains(file.toString());
  }

  @Test
  void textReaderDecompressesStreams() throws Exception {
    try (Reader reader = FileSource.textReader(new ByteArrayInputStream(gzip("héllo\n")))) {
      char[] buffer = new char[16];
      int n = reader.read(buffer);
      assertThat(new String(buffer, 0, n)).isEqualTo("héllo\n");
    }
  }
}
