package io.bloomoperator.spring;

import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.watch.BeforeFirstSnapshot;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.core.io.Resource;
import org.springframework.util.unit.DataSize;

/**
 * One entry of {@code bloom.filters.<bean>}: the BloomFilter resource a {@code LiveBloomFilter}
 * bean named {@code <bean>} follows, and the watcher's options. Unset options keep sidecar-lib's
 * defaults.
 */
public class BloomFilterProperties {

  /** Name of the BloomFilter resource (required). */
  private String name;

  /** Its namespace; default: the Kubernetes client's namespace, in a pod its own. */
  private String namespace;

  /** Key type of the filter: {@code String} (default) or {@code Long}. */
  private KeyType keyType = KeyType.STRING;

  /**
   * What lookups answer before the first snapshot: {@code fail-open} (default) or {@code
   * fail-closed}.
   */
  private BeforeFirstSnapshot failMode = BeforeFirstSnapshot.FAIL_OPEN;

  /**
   * A directory (an emptyDir volume, say) to keep the last verified snapshot in; none by default.
   */
  private Path localCacheDir;

  /**
   * Serve the filter from a memory-mapped file in {@code local-cache-dir} instead of the heap
   * (needs {@code local-cache-dir}); default false.
   */
  private boolean memoryMapped;

  /**
   * Ed25519 public keys (PEM, e.g. {@code file:/etc/bloom/operator.pub}) whose signatures are
   * trusted; with any, unsigned or otherwise signed manifests are refused. None by default.
   */
  private List<Resource> trustedKeys = new ArrayList<>();

  /**
   * The largest snapshot loaded; default a quarter of the maximum heap (with {@code memory-mapped},
   * the format's limit).
   */
  private DataSize maxSnapshotBytes;

  /** The most chunks a manifest may list; default sidecar-lib's. */
  private Integer maxChunks;

  /** Interval of the direct manifest read behind the watch; default 5 minutes, 0 turns it off. */
  private Duration resync;

  /**
   * Whether the reader reports which version this pod serves (docs/reader-protocol.md; needs
   * POD_NAME and POD_UID from the downward API and the optional Lease rule); default true.
   */
  private Boolean readerReports;

  /** Heartbeat of the reader report; default 60 s. */
  private Duration readerReportInterval;

  /**
   * The least time between two checks of the whole payload of a filter whose stream deltas are set
   * in the served bits in place ({@code BloomFilterWatcher.Builder.inPlaceDeltas}); default 1
   * minute, at most 1 hour. 0 turns in-place deltas off: every version is swapped in and its whole
   * payload verified before it is served, which costs a copy and a hash of the whole filter per
   * delta.
   */
  private Duration inPlaceCheckInterval;

  /**
   * The most keys {@code LiveBloomFilter.addLocal} holds at once (further adds are refused); 0
   * turns local adds off. Default 100,000.
   */
  private Integer localAddsMaxEntries;

  /**
   * How long a key added with {@code LiveBloomFilter.addLocal} is held when no served version shows
   * it (then counted as expired); default 10 minutes.
   */
  private Duration localAddsTtl;

  /** The longest String key {@code LiveBloomFilter.addLocal} accepts, in chars; default 256. */
  private Integer localAddsMaxKeyLength;

  /**
   * Keys of a fixed in-memory filter to serve instead of watching the cluster: a test double for an
   * application's tests (no Kubernetes client is used). Unset by default: watch.
   */
  private List<String> fixedKeys;

  public String getName() {
    return name;
  }

  public void setName(String name) {
    this.name = name;
  }

  public String getNamespace() {
    return namespace;
  }

  public void setNamespace(String namespace) {
    this.namespace = namespace;
  }

  public KeyType getKeyType() {
    return keyType;
  }

  public void setKeyType(KeyType keyType) {
    this.keyType = keyType;
  }

  public BeforeFirstSnapshot getFailMode() {
    return failMode;
  }

  public void setFailMode(BeforeFirstSnapshot failMode) {
    this.failMode = failMode;
  }

  public boolean isMemoryMapped() {
    return memoryMapped;
  }

  public void setMemoryMapped(boolean memoryMapped) {
    this.memoryMapped = memoryMapped;
  }

  public Path getLocalCacheDir() {
    return localCacheDir;
  }

  public void setLocalCacheDir(Path localCacheDir) {
    this.localCacheDir = localCacheDir;
  }

  public List<Resource> getTrustedKeys() {
    return trustedKeys;
  }

  public void setTrustedKeys(List<Resource> trustedKeys) {
    this.trustedKeys = trustedKeys;
  }

  public DataSize getMaxSnapshotBytes() {
    return maxSnapshotBytes;
  }

  public void setMaxSnapshotBytes(DataSize maxSnapshotBytes) {
    this.maxSnapshotBytes = maxSnapshotBytes;
  }

  public Integer getMaxChunks() {
    return maxChunks;
  }

  public void setMaxChunks(Integer maxChunks) {
    this.maxChunks = maxChunks;
  }

  public Duration getInPlaceCheckInterval() {
    return inPlaceCheckInterval;
  }

  public void setInPlaceCheckInterval(Duration inPlaceCheckInterval) {
    this.inPlaceCheckInterval = inPlaceCheckInterval;
  }

  public Duration getResync() {
    return resync;
  }

  public void setResync(Duration resync) {
    this.resync = resync;
  }

  public Boolean getReaderReports() {
    return readerReports;
  }

  public void setReaderReports(Boolean readerReports) {
    this.readerReports = readerReports;
  }

  public Duration getReaderReportInterval() {
    return readerReportInterval;
  }

  public void setReaderReportInterval(Duration readerReportInterval) {
    this.readerReportInterval = readerReportInterval;
  }

  public Integer getLocalAddsMaxEntries() {
    return localAddsMaxEntries;
  }

  public void setLocalAddsMaxEntries(Integer localAddsMaxEntries) {
    this.localAddsMaxEntries = localAddsMaxEntries;
  }

  public Duration getLocalAddsTtl() {
    return localAddsTtl;
  }

  public void setLocalAddsTtl(Duration localAddsTtl) {
    this.localAddsTtl = localAddsTtl;
  }

  public Integer getLocalAddsMaxKeyLength() {
    return localAddsMaxKeyLength;
  }

  public void setLocalAddsMaxKeyLength(Integer localAddsMaxKeyLength) {
    this.localAddsMaxKeyLength = localAddsMaxKeyLength;
  }

  public List<String> getFixedKeys() {
    return fixedKeys;
  }

  public void setFixedKeys(List<String> fixedKeys) {
    this.fixedKeys = fixedKeys;
  }
}
