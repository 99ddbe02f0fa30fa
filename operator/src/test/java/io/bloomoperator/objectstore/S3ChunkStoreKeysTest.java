package io.bloomoperator.objectstore;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.snapshot.ChunkStore.Part;
import io.bloomoperator.snapshot.SnapshotVersions;
import io.bloomoperator.snapshot.StoreObjectKeys;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Which object keys the clean-ups (janitor, finalizer, budget) take for the filter's own chunks:
 * every version the operator can write, at both ends of the one range; nothing beyond it.
 */
class S3ChunkStoreKeysTest {

  private static final String SHA = "ab".repeat(32);
  private static final long MAX = SnapshotVersions.MAX;

  // No request is made: only key parsing.
  private final S3ChunkStore store =
      new S3ChunkStore(null, "s", "b", "bloom", "ns", "ids", Duration.ZERO, Clock.systemUTC());

  private Optional<Part> partOf(String chunkName) {
    return store.partOf(StoreObjectKeys.key(store.directory(), chunkName, SHA));
  }

  @Test
  void everyVersionTheOperatorWritesIsRecognised() {
    for (long version : new long[] {1, 42, MAX}) {
      assertThat(partOf(store.name(Part.base(version), 0))).contains(Part.base(version));
      assertThat(partOf(store.name(Part.delta(version), 3))).contains(Part.delta(version));
    }
  }

  @Test
  void versionsOutsideTheRangeAreNotChunksOfTheFilter() {
    for (String version :
        new String[] {Long.toString(MAX + 1), "2000000000000000000", "0", "007"}) {
      assertThat(partOf("ids-bloom-v" + version + "-0")).as(version).isEmpty();
      assertThat(partOf("ids-bloom-v" + version + "-d0")).as(version).isEmpty();
    }
  }
}
