package io.bloomoperator.status;

import io.bloomoperator.api.BloomFilterStatus;
import io.bloomoperator.api.ByteSizes;
import io.bloomoperator.publish.ManifestRecord;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotNames;
import java.math.BigDecimal;
import java.math.MathContext;

/** The status fields that describe the published version, from its manifest and build record. */
final class PublishedFields {

  private PublishedFields() {}

  /** Sets {@code status}'s published-version fields from {@code current}. */
  static void write(BloomFilterStatus status, String filterName, PublishedSnapshot current) {
    Manifest published = current.manifest();
    status.setVersion(published.version());
    status.setManifest(SnapshotNames.manifestName(filterName));
    status.setKeys(published.keyCount());
    status.setNumBits(published.numBits());
    status.setNumHashFunctions(published.numHashFunctions());
    status.setFormat(published.filterFormat().crdName());
    // Three significant digits: exact enough to compare with the target, short in kubectl get.
    status.setExpectedFpp(
        new BigDecimal(published.expectedFpp()).round(new MathContext(3)).doubleValue());
    status.setSizeBytes(published.totalBytes());
    status.setSize(ByteSizes.human(published.totalBytes()));
    status.setChunks(published.chunkCount());
    status.setBaseVersion(published.baseVersion());
    status.setDeltas(published.deltas().size());
    status.setLastPublishBytes(published.versionBytes());
    status.setSha256(published.sha256());
    status.setManifestDigest(ManifestRecord.manifestDigest(current.configMap()));
    status.setBuildRecordDigest(ManifestRecord.buildRecordDigest(current.configMap()));
    // The keys the published version was built from; a build's own count (built()) replaces it.
    // Without it, a progress patch of a build that has ended meanwhile, still in the cached
    // status this copy started from, would be written back as the result.
    status.setKeysRead(published.keyCount());
    status.setSourceToken(current.sourceToken());
    if (current.builtAt() != null) {
      status.setLastBuildTime(current.builtAt().toString());
    }
  }
}
