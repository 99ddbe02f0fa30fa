package io.bloomoperator.settings;

import io.bloomoperator.changes.StreamLimits;
import io.bloomoperator.publish.DeltaPolicy;
import io.bloomoperator.publish.SigningKeySecret;
import io.bloomoperator.publish.WriteBudget;
import io.bloomoperator.source.HttpSourceSettings;
import io.bloomoperator.source.JdbcSourceSettings;
import io.bloomoperator.source.SecretAccess;
import java.time.Duration;

/**
 * Settings changed a value at a time, from a starting point ({@link OperatorSettings#builder()},
 * {@link OperatorSettings#toBuilder()}); {@link #build()} has each group check its values.
 */
public final class SettingsBuilder {
  private long maxSnapshotBytes;
  private long maxStoreSnapshotBytes;
  private long maxNamespaceBytes;
  private Duration minPublishInterval;
  private SigningKeySecret signingKey;
  private DeltaPolicy deltas;
  private WriteBudget.Limits writes;
  private long maxMalformedKeys;
  private Duration minRefreshInterval;
  private SecretAccess.Mode secretAccess;
  private HttpSourceSettings http;
  private JdbcSourceSettings jdbc;
  private StreamLimits streams;
  private int maxConcurrentBuilds;
  private Duration crashBackoff;
  private BuildLimits buildLimits;

  SettingsBuilder(OperatorSettings from) {
    maxSnapshotBytes = from.snapshots().maxBytes();
    maxStoreSnapshotBytes = from.snapshots().maxStoreBytes();
    maxNamespaceBytes = from.snapshots().maxNamespaceBytes();
    minPublishInterval = from.publishing().minInterval();
    signingKey = from.publishing().signingKey();
    deltas = from.publishing().deltas();
    writes = from.publishing().writes();
    maxMalformedKeys = from.sources().maxMalformedKeys();
    minRefreshInterval = from.sources().minRefreshInterval();
    secretAccess = from.sources().secretAccess();
    http = from.sources().http();
    jdbc = from.sources().jdbc();
    streams = from.sources().streams();
    maxConcurrentBuilds = from.builds().maxConcurrent();
    buildLimits = from.builds().limits();
    crashBackoff = from.builds().crashBackoff();
  }

  /** See {@link OperatorSettings.Snapshots#maxBytes()}. */
  public SettingsBuilder maxSnapshotBytes(long bytes) {
    maxSnapshotBytes = bytes;
    return this;
  }

  /** See {@link OperatorSettings.Snapshots#maxStoreBytes()}. */
  public SettingsBuilder maxStoreSnapshotBytes(long bytes) {
    maxStoreSnapshotBytes = bytes;
    return this;
  }

  /** See {@link OperatorSettings.Snapshots#maxNamespaceBytes()}. */
  public SettingsBuilder maxNamespaceBytes(long bytes) {
    maxNamespaceBytes = bytes;
    return this;
  }

  /** See {@link OperatorSettings.Publishing#minInterval()}. */
  public SettingsBuilder minPublishInterval(Duration interval) {
    minPublishInterval = interval;
    return this;
  }

  /** See {@link OperatorSettings.Publishing#signingKey()}; null publishes unsigned manifests. */
  public SettingsBuilder signingKey(SigningKeySecret secret) {
    signingKey = secret;
    return this;
  }

  /** See {@link OperatorSettings.Publishing#deltas()}. */
  public SettingsBuilder deltas(DeltaPolicy policy) {
    deltas = policy;
    return this;
  }

  /** See {@link OperatorSettings.Publishing#writes()}. */
  public SettingsBuilder writes(WriteBudget.Limits limits) {
    writes = limits;
    return this;
  }

  /** See {@link OperatorSettings.Sources#maxMalformedKeys()}. */
  public SettingsBuilder maxMalformedKeys(long keys) {
    maxMalformedKeys = keys;
    return this;
  }

  /** See {@link OperatorSettings.Sources#minRefreshInterval()}. */
  public SettingsBuilder minRefreshInterval(Duration interval) {
    minRefreshInterval = interval;
    return this;
  }

  /** See {@link OperatorSettings.Sources#secretAccess()}. */
  public SettingsBuilder secretAccess(SecretAccess.Mode mode) {
    secretAccess = mode;
    return this;
  }

  /** See {@link OperatorSettings.Sources#http()}. */
  public SettingsBuilder http(HttpSourceSettings settings) {
    http = settings;
    return this;
  }

  /** See {@link OperatorSettings.Sources#jdbc()}. */
  public SettingsBuilder jdbc(JdbcSourceSettings settings) {
    jdbc = settings;
    return this;
  }

  /** See {@link OperatorSettings.Sources#streams()}. */
  public SettingsBuilder streams(StreamLimits limits) {
    streams = limits;
    return this;
  }

  /** See {@link OperatorSettings.Builds#crashBackoff()}. */
  public SettingsBuilder crashBackoff(Duration backoff) {
    crashBackoff = backoff;
    return this;
  }

  /** See {@link OperatorSettings.Builds#maxConcurrent()}. */
  public SettingsBuilder maxConcurrentBuilds(int builds) {
    maxConcurrentBuilds = builds;
    return this;
  }

  /** See {@link OperatorSettings.Builds#limits()}. */
  public SettingsBuilder buildLimits(BuildLimits limits) {
    buildLimits = limits;
    return this;
  }

  /**
   * The settings.
   *
   * @throws IllegalArgumentException when a group's values are not valid
   */
  public OperatorSettings build() {
    return new OperatorSettings(
        new OperatorSettings.Snapshots(maxSnapshotBytes, maxStoreSnapshotBytes, maxNamespaceBytes),
        new OperatorSettings.Publishing(minPublishInterval, signingKey, deltas, writes),
        new OperatorSettings.Sources(
            maxMalformedKeys, minRefreshInterval, secretAccess, http, jdbc, streams),
        new OperatorSettings.Builds(maxConcurrentBuilds, buildLimits, crashBackoff));
  }
}
