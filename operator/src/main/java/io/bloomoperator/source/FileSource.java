package io.bloomoperator.source;

import io.bloomoperator.api.Reasons;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.zip.GZIPInputStream;

/**
 * Newline-separated keys in a local file, plain or gzip-compressed (recognised by its magic bytes,
 * not its name), following the shared {@link LineParser} line rules. Used by the offline CLI;
 * re-readable, as {@link KeySource} requires, because it reopens the file on every read.
 */
public final class FileSource implements KeySource {

  private static final int GZIP_MAGIC_1 = 0x1f;
  private static final int GZIP_MAGIC_2 = 0x8b;
  private static final int BUFFER = 64 * 1024;

  private final Path path;

  public FileSource(Path path) {
    this.path = path;
  }

  public Path path() {
    return path;
  }

  @Override
  public String description() {
    return "file " + path;
  }

  /** Size and modification time: changes whenever the file is rewritten. */
  @Override
  public String changeToken() throws SourceException {
    try {
      BasicFileAttributes attributes = Files.readAttributes(path, BasicFileAttributes.class);
      return "file:" + attributes.size() + ":" + attributes.lastModifiedTime().toMillis();
    } catch (IOException e) {
      throw failure(e);
    }
  }

  @Override
  public void readKeys(KeySink sink) throws SourceException {
    if (Files.isDirectory(path)) {
      throw new SourceException(Reasons.SOURCE_UNREADABLE, path + " is a directory, not a file");
    }
    InputStream raw;
    try {
      raw = Files.newInputStream(path);
    } catch (IOException e) {
      throw failure(e);
    }
    try (InputStream in = raw) {
      TextKeys.stream(textReader(in), sink, description());
    } catch (IOException e) {
      // Only opening the decompressor or closing can get here; reading is reported by TextKeys.
      throw failure(e);
    }
  }

  /** Whether {@code in} (which must support mark/reset) starts with the gzip magic bytes. */
  static boolean isGzip(InputStream in) throws IOException {
    in.mark(2);
    int first = in.read();
    int second = in.read();
    in.reset();
    return first == GZIP_MAGIC_1 && second == GZIP_MAGIC_2;
  }

  /**
   * Strict UTF-8 text of {@code raw}, decompressed when it starts with the gzip magic bytes (for
   * callers that read a stream, such as stdin, with the same rules as a file).
   */
  public static Reader textReader(InputStream raw) throws IOException {
    BufferedInputStream buffered = new BufferedInputStream(raw, BUFFER);
    InputStream content = isGzip(buffered) ? new GZIPInputStream(buffered, BUFFER) : buffered;
    // Strict UTF-8: a file in another encoding must fail the build rather than insert
    // replacement characters that no client will ever look up.
    return new InputStreamReader(
        content,
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT));
  }

  private SourceException failure(IOException e) {
    if (e instanceof NoSuchFileException) {
      return new SourceException(Reasons.SOURCE_NOT_FOUND, "file " + path + " does not exist", e);
    }
    if (e instanceof AccessDeniedException) {
      return new SourceException(
          Reasons.SOURCE_UNREADABLE, "file " + path + " is not readable (permission denied)", e);
    }
    return new SourceException(
        Reasons.SOURCE_UNREADABLE, "reading file " + path + " failed: " + e, e);
  }
}
