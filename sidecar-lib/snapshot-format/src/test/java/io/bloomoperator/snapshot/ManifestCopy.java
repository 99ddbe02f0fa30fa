package io.bloomoperator.snapshot;

import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.List;

/**
 * A copy of a manifest with some fields changed: what tests that forge, re-date or rename manifests
 * need, without spelling out all thirteen components each time.
 */
public final class ManifestCopy {

  private final Manifest m;
  private long version;
  private String sha256;
  private String createdAt;
  private List<Manifest.ChunkRef> chunks;

  private ManifestCopy(Manifest m) {
    this.m = m;
    this.version = m.version();
    this.sha256 = m.sha256();
    this.createdAt = m.createdAt();
    this.chunks = m.chunks();
  }

  public static ManifestCopy of(Manifest m) {
    return new ManifestCopy(m);
  }

  public ManifestCopy version(long version) {
    this.version = version;
    return this;
  }

  public ManifestCopy sha256(String sha256) {
    this.sha256 = sha256;
    return this;
  }

  /** As written in the manifest (any text: tests of validation need bad ones too). */
  public ManifestCopy createdAt(String createdAt) {
    this.createdAt = createdAt;
    return this;
  }

  /** As the operator writes it. */
  public ManifestCopy createdAt(Instant createdAt) {
    return createdAt(DateTimeFormatter.ISO_INSTANT.format(createdAt));
  }

  public ManifestCopy chunks(List<Manifest.ChunkRef> chunks) {
    this.chunks = chunks;
    return this;
  }

  public Manifest build() {
    return new Manifest(
        m.format(),
        version,
        m.filterName(),
        m.keyType(),
        m.numBits(),
        m.numHashFunctions(),
        m.keyCount(),
        m.expectedFpp(),
        m.totalBytes(),
        sha256,
        createdAt,
        chunks,
        m.chain());
  }
}
