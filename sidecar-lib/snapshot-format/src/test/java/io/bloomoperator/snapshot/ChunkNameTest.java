package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.snapshot.SnapshotNames.ChunkName;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * {@link ChunkName#parse}: every name the writer gives reads back as the chunk it names, at both
 * ends of the version range and of the index, for short and cut filter names; nothing else does.
 * The object-store clean-ups delete what it recognises, so a false match would delete a stranger's
 * object and a missed one would leak a chunk.
 */
class ChunkNameTest {

  private static final long MAX = SnapshotVersions.MAX;
  private static final int MAX_INDEX = Integer.MAX_VALUE;

  /** Short; at the uncut limit of a manifest (so its chunk names are cut); long; dotted. */
  private static final String[] FILTERS = {
    "ids", "a".repeat(253 - "-bloom".length()), "team.payments-" + "x".repeat(240), "ab.".repeat(84)
  };

  private static Optional<ChunkName> parse(String name) {
    return ChunkName.parse("ids", name);
  }

  @Test
  void everyNameTheWriterGivesReadsBack() {
    for (String filter : FILTERS) {
      for (long version : new long[] {1, 9, 10, 42, MAX}) {
        for (int index : new int[] {0, 1, 9, 10, 999_999_999, 1_000_000_000, MAX_INDEX}) {
          String base = SnapshotNames.chunkName(filter, version, index);
          String delta = SnapshotNames.deltaChunkName(filter, version, index);
          assertThat(ChunkName.parse(filter, base))
              .as(base)
              .contains(new ChunkName(version, index, false));
          assertThat(ChunkName.parse(filter, delta))
              .as(delta)
              .contains(new ChunkName(version, index, true));
        }
      }
    }
  }

  @Test
  void writesTheNamesSnapshotNamesGives() {
    assertThat(new ChunkName(12, 3, false).nameFor("orders")).isEqualTo("orders-bloom-v12-3");
    assertThat(new ChunkName(12, 3, true).nameFor("orders")).isEqualTo("orders-bloom-v12-d3");
    String longName = FILTERS[2];
    assertThat(new ChunkName(MAX, MAX_INDEX, true).nameFor(longName))
        .isEqualTo(SnapshotNames.deltaChunkName(longName, MAX, MAX_INDEX));
  }

  @Test
  void versionsOutsideTheRangeAndNonCanonicalDigitsAreRefused() {
    for (String version :
        new String[] {"0", "00", "01", "007", "+1", "-1", Long.toString(MAX + 1), "9".repeat(19)}) {
      assertThat(parse("ids-bloom-v" + version + "-0")).as(version).isEmpty();
      assertThat(parse("ids-bloom-v" + version + "-d0")).as(version).isEmpty();
    }
    for (String index :
        new String[] {"00", "01", "+1", "-1", "2147483648", "9999999999", "1".repeat(11), ""}) {
      assertThat(parse("ids-bloom-v1-" + index)).as(index).isEmpty();
      assertThat(parse("ids-bloom-v1-d" + index)).as(index).isEmpty();
    }
  }

  @Test
  void namesOfOtherThingsAreRefused() {
    assertThat(parse(null)).isEmpty();
    assertThat(parse("")).isEmpty();
    assertThat(parse("ids-bloom")).as("the manifest").isEmpty();
    assertThat(parse("ids-bloom-v1")).isEmpty();
    assertThat(parse("ids-bloom-v1-d")).isEmpty();
    assertThat(parse("ids-bloom-v1-x0")).isEmpty();
    assertThat(parse("ids-bloom-v1-dd0")).isEmpty();
    assertThat(parse("ids-bloom-v1-0-")).isEmpty();
    assertThat(parse("ids-bloom-v1-0.yaml")).isEmpty();
    assertThat(parse("ids-bloom-V1-0")).isEmpty();
    assertThat(parse("ids-bloom-v1-0a")).isEmpty();
    assertThat(parse("ids-bloom-ack-v1-0")).isEmpty();
    assertThat(parse("ids-bloomv1-0")).isEmpty();
  }

  @Test
  void chunksOfOtherFiltersAreRefused() {
    // Same end, another start: a longer name, a shorter one, one ending like this filter's.
    assertThat(parse(SnapshotNames.chunkName("xids", 1, 0))).isEmpty();
    assertThat(parse(SnapshotNames.chunkName("id", 1, 0))).isEmpty();
    assertThat(parse(SnapshotNames.chunkName("x.ids", 1, 0))).isEmpty();
    // A filter named like one of this filter's chunks: its chunks are its own, not this one's.
    String lookAlike = SnapshotNames.chunkName("ids", 1, 0);
    String itsChunk = SnapshotNames.chunkName(lookAlike, 2, 0);
    assertThat(parse(itsChunk)).isEmpty();
    assertThat(ChunkName.parse(lookAlike, itsChunk)).contains(new ChunkName(2, 0, false));
    assertThat(ChunkName.parse(lookAlike, lookAlike)).isEmpty();
  }

  @Test
  void cutNamesMatchOnlyTheirOwnFilter() {
    String a = FILTERS[2] + "-alpha";
    String b = FILTERS[2] + "-bravo";
    String ofA = SnapshotNames.chunkName(a, 5, 1);
    assertThat(ChunkName.parse(a, ofA)).contains(new ChunkName(5, 1, false));
    assertThat(ChunkName.parse(b, ofA)).as("same start, other hash").isEmpty();
    // The uncut spelling of a long filter's chunk is not what the writer gives.
    assertThat(ChunkName.parse(a, a + "-bloom-v5-1")).isEmpty();
    // A filter at the limit: its manifest name is whole, its chunk names are cut.
    String atLimit = FILTERS[1];
    assertThat(ChunkName.parse(atLimit, atLimit + "-bloom-v1-0")).isEmpty();
    assertThat(SnapshotNames.chunkName(atLimit, 1, 0)).doesNotStartWith(atLimit);
  }

  @Test
  void noChunkNameOutsideTheRange() {
    assertThatThrownBy(() -> new ChunkName(0, 0, false))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new ChunkName(MAX + 1, 0, true))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new ChunkName(1, -1, false))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(new ChunkName(MAX, 0, false).version()).isEqualTo(MAX);
    assertThatThrownBy(() -> ChunkName.parse(null, "ids-bloom-v1-0"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ChunkName.parse("", "-bloom-v1-0"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
