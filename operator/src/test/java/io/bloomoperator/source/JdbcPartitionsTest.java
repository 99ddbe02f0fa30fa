package io.bloomoperator.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.api.JdbcPartitionsSpec;
import io.bloomoperator.api.JdbcSourceSpec;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Partition plans: Spark's range semantics (every value and NULL in exactly one partition, the ends
 * open), the column and count refused before anything is sent, the query wrapped and never edited.
 */
class JdbcPartitionsTest {

  static JdbcPartitionsSpec partitions(String column, int count, long lower, long upper) {
    JdbcPartitionsSpec p = new JdbcPartitionsSpec();
    p.setColumn(column);
    p.setCount(count);
    p.setLowerBound(lower);
    p.setUpperBound(upper);
    return p;
  }

  /** The partitions {@code value} falls in; NULL when {@code value} is null. */
  private static int partitionsHolding(List<JdbcPartitions.Range> ranges, Long value) {
    int n = 0;
    for (JdbcPartitions.Range r : ranges) {
      boolean in =
          value == null
              ? r.lower() == null
              : (r.lower() == null || value >= r.lower())
                  && (r.upper() == null || value < r.upper());
      n += in ? 1 : 0;
    }
    return n;
  }

  @Test
  void everyValueAndNullIsInExactlyOnePartition() {
    Random random = new Random(5);
    long[][] bounds = {
      {0, 200_000},
      {-1000, 1000},
      {50_000, 50_007},
      {Long.MIN_VALUE, Long.MAX_VALUE},
      {0, 64},
      // Bounds near the top, where adding the stride wraps unless clamped (ranges overlapping).
      // (count 7 from MAX - 8: a stride of 2 wraps before the last range).
      {Long.MAX_VALUE - 8, Long.MAX_VALUE},
      {1L << 62, Long.MAX_VALUE}
    };
    for (long[] b : bounds) {
      for (int count : new int[] {1, 2, 3, 7, 64}) {
        if (b[1] - b[0] < count && b[1] - b[0] >= 0) {
          continue;
        }
        List<JdbcPartitions.Range> ranges = JdbcPartitions.ranges(count, b[0], b[1]);
        assertThat(ranges).hasSize(count);
        assertThat(ranges.get(0).lower()).as("first open below").isNull();
        assertThat(ranges.get(count - 1).upper()).as("last open above").isNull();
        assertThat(partitionsHolding(ranges, null)).isEqualTo(1);
        long[] values = {Long.MIN_VALUE, Long.MAX_VALUE, b[0], b[1], b[0] - 1, b[1] + 1, 0};
        for (long v : values) {
          assertThat(partitionsHolding(ranges, v)).as("%d in %s", v, ranges).isEqualTo(1);
        }
        for (int i = 0; i < 10_000; i++) {
          long v = random.nextLong();
          assertThat(partitionsHolding(ranges, v)).isEqualTo(1);
        }
      }
    }
  }

  @Test
  void theQueryIsWrappedAndTheColumnQuotedPerDialect() {
    JdbcPartitions plan =
        JdbcPartitions.of(partitions("part_id", 3, 0, 300), "select k, part_id from t");
    List<JdbcPartitions.Range> r = plan.ranges();
    assertThat(plan.wrap("select k, part_id from t", r.get(0), JdbcDriver.POSTGRESQL))
        .isEqualTo(
            "SELECT * FROM (select k, part_id from t) AS bloom_part WHERE bloom_part.\"part_id\""
                + " < ? OR bloom_part.\"part_id\" IS NULL");
    assertThat(plan.wrap("select k, part_id from t", r.get(1), JdbcDriver.MARIADB))
        .isEqualTo(
            "SELECT * FROM (select k, part_id from t) AS bloom_part WHERE bloom_part.`part_id`"
                + " >= ? AND bloom_part.`part_id` < ?");
    assertThat(plan.wrap("select k, part_id from t", r.get(2), JdbcDriver.MYSQL))
        .endsWith("WHERE bloom_part.`part_id` >= ?");
  }

  private static JdbcSourceSpec spec(JdbcPartitionsSpec partitions) {
    JdbcSourceSpec spec = new JdbcSourceSpec();
    spec.setUrl("jdbc:postgresql://db.example:5432/x");
    spec.setQuery("select k, id from t");
    spec.setPartitions(partitions);
    return spec;
  }

  private static JdbcSource source(JdbcSourceSpec spec) {
    return new JdbcSource(spec, JdbcTestSettings.LOOPBACK, () -> null);
  }

  /** An injection attempt in the column is refused before anything is sent, and not repeated. */
  @Test
  void anInjectionInTheColumnNameIsRefusedByValidation() {
    for (String column :
        List.of(
            "id\" < 0 OR 1=1 OR \"id",
            "id; drop table t",
            "id`) OR 1=1 OR (`id",
            "1id",
            "",
            "i d",
            "id--",
            "a".repeat(64),
            "ïd")) {
      assertThat(column).doesNotMatch(JdbcPartitionsSpec.COLUMN_PATTERN);
      assertThatThrownBy(() -> source(spec(partitions(column, 2, 0, 100))))
          .as(column)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("spec.source.jdbc.partitions.column must be a plain identifier")
          .satisfies(
              e -> assertThat(e.getMessage()).doesNotContain(column.isEmpty() ? "\0" : column));
    }
    assertThat("part_Id_9").matches(JdbcPartitionsSpec.COLUMN_PATTERN);
    source(spec(partitions("part_Id_9", 2, 0, 100)));
  }

  @Test
  void aCountAboveTheMaximumOrBadBoundsAreRefused() {
    assertThatThrownBy(() -> source(spec(partitions("id", 65, 0, 1000))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("between 1 and 64");
    assertThatThrownBy(() -> source(spec(partitions("id", 0, 0, 1000))))
        .hasMessageContaining("between 1 and 64");
    assertThatThrownBy(() -> source(spec(partitions("id", 8, 0, 7))))
        .hasMessageContaining("at least lowerBound + count");
    assertThatThrownBy(() -> source(spec(partitions("id", 2, 10, 0))))
        .hasMessageContaining("at least lowerBound + count");
    JdbcSourceSpec questionMark = spec(partitions("id", 2, 0, 100));
    questionMark.setQuery("select k, id from t where tags ? 'x'");
    assertThatThrownBy(() -> source(questionMark)).hasMessageContaining("must not contain ?");
    // The widest bounds do not overflow.
    source(spec(partitions("id", 64, Long.MIN_VALUE, Long.MAX_VALUE)));
  }
}
