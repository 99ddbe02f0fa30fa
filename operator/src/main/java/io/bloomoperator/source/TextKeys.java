package io.bloomoperator.source;

import io.bloomoperator.api.Reasons;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.Reader;

/** Feeds newline-separated text to a sink line by line without holding a list of lines. */
final class TextKeys {

  private TextKeys() {}

  static void stream(Reader reader, KeySink sink, String what) throws SourceException {
    try (BufferedReader lines = new BufferedReader(reader, 64 * 1024)) {
      String line;
      while ((line = lines.readLine()) != null) {
        sink.line(line);
      }
    } catch (IOException e) {
      throw new SourceException(
          Reasons.SOURCE_UNREADABLE, "reading " + what + " failed: " + e.getMessage(), e);
    }
  }
}
