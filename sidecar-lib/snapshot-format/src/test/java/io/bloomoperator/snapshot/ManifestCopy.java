package io.bloomoperator.snapshot;

import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.List;

/**
 * A copy of a manifest with some fields changed: what tests that forge, re-date or rename manifests
 * need, without spelling out all of its components each time.
 */
public final class ManifestCopy {

  private String format;
  private String filterName;
  private KeyType keyType;
  private long numBits;
  private int numHashFunctions;
  private long keyCount;
  private double expectedFpp;
  private long totalBytes;
  private long version;
  private String sha256;
  private String createdAt;
  private List<Manifest.ChunkRef> chunks;
  private Manifest.Chain chain;
  private String store;

  private ManifestCopy(Manifest m) {
    this.format = m.format();
    this.filterName = m.filterName();
    this.keyType = m.keyType();
    this.numBits = m.numBits();
    this.numHashFunctions = m.numHashFunctions();
    this.keyCount = m.keyCount();
    this.expectedFpp = m.expectedFpp();
    this.totalBytes = m.totalBytes();
    this.version = m.version();
    this.sha256 = m.sha256();
    this.createdAt = m.createdAt();
    this.chunks = m.chunks();
    this.chain = m.chain();
    this.store = m.store();
  }

  public static ManifestCopy of(Manifest m) {
    return new ManifestCopy(m);
  }

  public ManifestCopy format(String format) {
    this.format = format;
    return this;
  }

  public ManifestCopy filterName(String filterName) {
    this.filterName = filterName;
    return this;
  }

  public ManifestCopy keyType(KeyType keyType) {
    this.keyType = keyType;
    return this;
  }

  public ManifestCopy numBits(long numBits) {
    this.numBits = numBits;
    return this;
  }

  public ManifestCopy numHashFunctions(int numHashFunctions) {
    this.numHashFunctions = numHashFunctions;
    return this;
  }

  public ManifestCopy keyCount(long keyCount) {
    this.keyCount = keyCount;
    return this;
  }

  public ManifestCopy expectedFpp(double expectedFpp) {
    this.expectedFpp = expectedFpp;
    return this;
  }

  public ManifestCopy totalBytes(long totalBytes) {
    this.totalBytes = totalBytes;
    return this;
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

  public ManifestCopy chain(Manifest.Chain chain) {
    this.chain = chain;
    return this;
  }

  public ManifestCopy store(String store) {
    this.store = store;
    return this;
  }

  public Manifest build() {
    return new Manifest(
        format,
        version,
        filterName,
        keyType,
        numBits,
        numHashFunctions,
        keyCount,
        expectedFpp,
        totalBytes,
        sha256,
        createdAt,
        chunks,
        chain,
        store);
  }
}
