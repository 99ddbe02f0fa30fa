package io.bloomoperator.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.KeyType;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LineParserTest {

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

  @Test
  void trimsAndSkipsBlankLinesAndComments() throws SourceException {
    LineParser parser = new LineParser(KeyType.STRING, collect, 0);
    for (String line : List.of("  sku-1  ", "", "   ", "# a comment", "\tsku-2", "sku #3")) {
      parser.line(line);
    }
    assertThat(keys).containsExactly("sku-1", "sku-2", "sku #3");
    assertThat(parser.keys()).isEqualTo(3);
  }

  @Test
  void parsesLongKeysIncludingExtremes() throws SourceException {
    LineParser parser = new LineParser(KeyType.LONG, collect, 0);
    for (String line : List.of("0", "-1", " 9223372036854775807 ", "-9223372036854775808")) {
      parser.line(line);
    }
    assertThat(keys).containsExactly(0L, -1L, Long.MAX_VALUE, Long.MIN_VALUE);
  }

  @Test
  void malformedLongFailsByDefaultNamingThePositionNotTheContent() {
    LineParser parser = new LineParser(KeyType.LONG, collect, 0);
    assertThatThrownBy(
            () -> {
              parser.line("12");
              parser.line("# comment lines count as lines");
              parser.line("hunter2-secret");
            })
        .isInstanceOfSatisfying(
            SourceException.class, e -> assertThat(e.reason()).isEqualTo(Reasons.MALFORMED_KEYS))
        .hasMessageContaining("line 3 (14 characters)")
        .hasMessageNotContaining("hunter2");
    assertThat(keys).containsExactly(12L);
  }

  @Test
  void malformedValuesOfRowSourcesAreNamedByRow() {
    LineParser parser = new LineParser(KeyType.LONG, collect, 0);
    assertThatThrownBy(
            () -> {
              parser.value(1L);
              parser.nullValue();
              parser.value("s3cr3t");
            })
        .isInstanceOf(SourceException.class)
        .hasMessageContaining("value 3 (6 characters)")
        .hasMessageNotContaining("s3cr3t");
  }

  @Test
  void malformedLinesUpToTheThresholdAreCountedAndSkipped() throws SourceException {
    LineParser parser = new LineParser(KeyType.LONG, collect, 2);
    parser.line("1");
    parser.line("x");
    parser.line("9223372036854775808"); // overflows a long
    parser.line("2");
    assertThat(keys).containsExactly(1L, 2L);
    assertThat(parser.malformed()).isEqualTo(2);
    assertThatThrownBy(() -> parser.line("y"))
        .isInstanceOf(SourceException.class)
        .hasMessageContaining("3 line(s)");
  }
}
