package io.bloomoperator.publish;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.BloomFilterStatus;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which published manifests the operator builds on: only its own, by its records. */
class OwnManifestsTest {

  private static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");

  @Test
  void theManifestTheStatusRecordsIsOurs() throws Exception {
    PublishedSnapshot v1 = snapshot(1, "a", NOW, "t1");
    BloomFilter owner = owner(recorded(v1));
    OwnManifests.Checked checked = new OwnManifests().check(owner, v1, NOW);
    assertThat(checked.foreign()).isFalse();
    assertThat(checked.usable()).isSameAs(v1);
  }

  @Test
  void anEditedOrReplayedManifestIsNotOursAndItsVersionIsOnlyCountedAbove() throws Exception {
    PublishedSnapshot v2 = snapshot(2, "b", NOW, "t2");
    BloomFilter owner = owner(recorded(v2));
    // A genuine older version restored with the current build record, and an edited createdAt.
    PublishedSnapshot replayed = snapshot(1, "a", NOW.minusSeconds(60), "t2");
    PublishedSnapshot future = snapshot(2, "b", Instant.parse("2999-01-01T00:00:00Z"), "t2");
    for (PublishedSnapshot foreign : new PublishedSnapshot[] {replayed, future}) {
      OwnManifests.Checked checked = new OwnManifests().check(owner, foreign, NOW);
      assertThat(checked.foreign()).isTrue();
      assertThat(checked.usable().manifest()).as("nothing to build on").isNull();
      assertThat(checked.usable().configMap()).isSameAs(foreign.configMap());
      assertThat(checked.seenVersion()).isEqualTo(foreign.manifest().version());
      assertThat(checked.problem()).doesNotContain("2999").doesNotContain("t2");
    }
  }

  @Test
  void aFutureCreatedAtIsNotOursEvenWhenRecorded() throws Exception {
    PublishedSnapshot ahead =
        snapshot(1, "a", NOW.plus(OwnManifests.MAX_CLOCK_SKEW).plusSeconds(1), "t");
    assertThat(new OwnManifests().check(owner(recorded(ahead)), ahead, NOW).foreign()).isTrue();
    PublishedSnapshot skewed = snapshot(1, "a", NOW.plusSeconds(30), "t");
    assertThat(new OwnManifests().check(owner(recorded(skewed)), skewed, NOW).foreign()).isFalse();
  }

  @Test
  void onlyTheBuildRecordEditedMeansRebuildNotReplace() throws Exception {
    PublishedSnapshot v1 = snapshot(1, "a", NOW, "t1");
    BloomFilter owner = owner(recorded(v1));
    PublishedSnapshot edited = snapshot(1, "a", NOW, "t-forged");
    OwnManifests.Checked checked = new OwnManifests().check(owner, edited, NOW);
    assertThat(checked.foreign()).isTrue();
    assertThat(checked.seenVersion()).isZero();
    assertThat(checked.usable().manifest()).isEqualTo(edited.manifest());
    assertThat(checked.usable().sourceToken()).as("build record ignored").isNull();
    assertThat(checked.usable().specGeneration()).isEqualTo(-1);
    assertThat(edited.sourceToken()).as("the ConfigMap read is not changed").isEqualTo("t-forged");
  }

  @Test
  void whatThisProcessWroteLastWinsOverALaggingStatus() throws Exception {
    PublishedSnapshot v1 = snapshot(1, "a", NOW, "t1");
    PublishedSnapshot v2 = snapshot(2, "b", NOW, "t2");
    BloomFilter owner = owner(recorded(v1)); // the status write of v2 not seen yet
    OwnManifests records = new OwnManifests();
    records.wrote(owner, v2);
    assertThat(records.check(owner, v2, NOW).foreign()).isFalse();
    assertThat(records.check(owner, v1, NOW).foreign()).as("v1 replayed").isTrue();
  }

  @Test
  void aHigherVersionInTheStatusWinsOverOldMemory() throws Exception {
    // This replica wrote v1, lost the Lease; another published v2 and recorded it; back again.
    PublishedSnapshot v1 = snapshot(1, "a", NOW, "t1");
    PublishedSnapshot v2 = snapshot(2, "b", NOW, "t2");
    OwnManifests records = new OwnManifests();
    records.wrote(owner(null), v1);
    BloomFilter owner = owner(recorded(v2));
    assertThat(records.check(owner, v2, NOW).foreign()).isFalse();
    assertThat(records.check(owner, v1, NOW).foreign()).isTrue();
  }

  @Test
  void aStatusFromBeforeDigestsTrustsTheVersionItReports() throws Exception {
    PublishedSnapshot v3 = snapshot(3, "c", NOW, "t");
    BloomFilterStatus legacy = new BloomFilterStatus();
    legacy.setVersion(3L);
    legacy.setSha256(v3.manifest().sha256());
    assertThat(new OwnManifests().check(owner(legacy), v3, NOW).foreign()).isFalse();
    legacy.setVersion(4L);
    assertThat(new OwnManifests().check(owner(legacy), v3, NOW).foreign()).isTrue();
    assertThat(new OwnManifests().check(owner(null), v3, NOW).foreign()).isTrue();
  }

  @Test
  void aManifestWrittenJustBeforeAKillIsOursAfterTheRestart(@TempDir Path dir) throws Exception {
    // The killed process recorded v2 on its disk and wrote it; the status write of v2 never made.
    PublishedSnapshot v1 = snapshot(1, "a", NOW, "t1");
    PublishedSnapshot v2 = snapshot(2, "b", NOW, "t1");
    BloomFilter owner = owner(recorded(v1));
    new OwnManifests(dir).writing(owner, v2.configMap(), 2);

    OwnManifests restarted = new OwnManifests(dir);
    OwnManifests.Checked checked = restarted.check(owner, v2, NOW);
    assertThat(checked.foreign()).isFalse();
    assertThat(checked.usable()).isSameAs(v2);
    assertThat(new OwnManifests().check(owner, v2, NOW).foreign())
        .as("the status alone cannot tell")
        .isTrue();
    // Nothing else gets in that way: an older version of its own, an edited v2, a forged record.
    assertThat(restarted.check(owner(recorded(v2)), v1, NOW).foreign()).as("v1 replayed").isTrue();
    assertThat(restarted.check(owner, snapshot(2, "c", NOW, "t1"), NOW).foreign()).isTrue();
    assertThat(
            restarted.check(owner, snapshot(2, "b", NOW, "t-forged"), NOW).usable().sourceToken())
        .as("build record not as recorded: ignored")
        .isNull();
  }

  @Test
  void aRecordOnDiskNoNewerThanTheStatusIsNotUsed(@TempDir Path dir) throws Exception {
    // This replica recorded v2, lost the Lease; another published v3 and its status; v2 restored.
    PublishedSnapshot v2 = snapshot(2, "b", NOW, "t2");
    PublishedSnapshot v3 = snapshot(3, "c", NOW, "t3");
    new OwnManifests(dir).writing(owner(null), v2.configMap(), 2);
    OwnManifests restarted = new OwnManifests(dir);
    assertThat(restarted.check(owner(recorded(v3)), v2, NOW).foreign()).isTrue();
    assertThat(restarted.check(owner(recorded(v3)), v3, NOW).foreign()).isFalse();
  }

  private static BloomFilterStatus recorded(PublishedSnapshot snapshot) {
    BloomFilterStatus status = new BloomFilterStatus();
    status.setVersion(snapshot.manifest().version());
    status.setSha256(snapshot.manifest().sha256());
    status.setManifestDigest(ManifestRecord.manifestDigest(snapshot.configMap()));
    status.setBuildRecordDigest(ManifestRecord.buildRecordDigest(snapshot.configMap()));
    return status;
  }

  private static BloomFilter owner(BloomFilterStatus status) {
    BloomFilter owner = new BloomFilter();
    owner.setMetadata(
        new ObjectMetaBuilder().withNamespace("shop").withName("ids").withUid("uid-1").build());
    owner.setStatus(status);
    return owner;
  }

  private static PublishedSnapshot snapshot(
      long version, String prefix, Instant created, String token) throws Exception {
    BloomFilterBits.Builder builder = BloomFilterBits.builder(KeyType.STRING, 64 * 16, 3);
    for (int i = 0; i < 20; i++) {
      builder.putString(prefix + i);
    }
    BloomFilterBits bits = builder.build();
    Manifest manifest =
        Manifest.of(
            "ids",
            version,
            bits,
            20,
            SnapshotEncoder.encode(bits, 1024, (index, data, length, sha) -> {}),
            created);
    Map<String, String> annotations = new HashMap<>();
    SnapshotConfigMaps.putBuildRecord(annotations, token, 1, created);
    ConfigMap configMap = SnapshotConfigMaps.manifest("shop", manifest, null, annotations);
    return new PublishedSnapshot(configMap, manifest);
  }
}
