package io.bloomoperator.watch;

import io.bloomoperator.snapshot.AnnouncedManifest;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotLimits;
import io.bloomoperator.snapshot.SnapshotRefusedException;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.bloomoperator.snapshot.TrustedKeys;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Set;

/**
 * The reader's one rule for an announced manifest, judged before anything it names is fetched or
 * allocated: load it, keep serving what is served ({@link Verdict.Same}), or refuse it with a
 * reason. Pure: the same arguments give the same verdict, with no I/O. Every acceptance rule of the
 * reader lives here, for manifests from the API server and from the local snapshot directory alike
 * (chunk digests, sizes and headers are the decoder's, checked while the bits are read).
 *
 * <p>In order: a trusted signature (when keys are trusted), the filter name, size limits and
 * canonical chunk names; an object store the reader is configured for (when the chunks are in one);
 * then the same snapshot as served is {@link Verdict.Same}; then, with a maximum age, a manifest
 * created longer ago is refused (the only defence of a reader that starts with nothing served
 * against a replayed old signed version); with trusted keys, a manifest not {@linkplain
 * Manifest#publishedAfter published after} the served one is refused as a rollback (a re-created
 * filter's version 1 was created later, so it loads); last, a snapshot of another key type is
 * refused: hashing Long keys against String hashes gives plausible wrong answers. Without trusted
 * keys a lower version loads: it is the operator's current truth (a re-created filter).
 *
 * @param namespace the filter's namespace (signatures are bound to it)
 * @param filterName the filter's name
 * @param keyType the key type this reader serves
 * @param limits the largest snapshot this reader loads
 * @param trustedKeys keys whose signatures are accepted; empty: signatures are ignored
 * @param maxManifestAge the oldest {@code createdAt} accepted, or null for any age
 * @param stores the names of the object stores this reader is configured for: a manifest whose
 *     chunks are in any other store is refused ({@link LoadFailureReason#UNKNOWN_STORE})
 */
record Acceptance(
    String namespace,
    String filterName,
    KeyType keyType,
    SnapshotLimits limits,
    TrustedKeys trustedKeys,
    Duration maxManifestAge,
    Set<String> stores) {

  Acceptance {
    stores = Set.copyOf(stores);
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(filterName, "filterName");
    Objects.requireNonNull(keyType, "keyType");
    Objects.requireNonNull(limits, "limits");
    Objects.requireNonNull(trustedKeys, "trustedKeys");
  }

  /** What to do with an announced manifest. */
  sealed interface Verdict {
    /** Fetch and serve it. */
    record Load() implements Verdict {}

    /** It announces the snapshot already served: nothing to load, nothing older to retry. */
    record Same() implements Verdict {}

    /**
     * Do not load it; {@code reason} goes to the listeners (a {@link SnapshotRefusedException}
     * whose reason says why, or a key-type mismatch).
     */
    record Refuse(SnapshotVerificationException reason) implements Verdict {}
  }

  /** A reader configured for no object store: chunks are read from ConfigMaps only. */
  Acceptance(
      String namespace,
      String filterName,
      KeyType keyType,
      SnapshotLimits limits,
      TrustedKeys trustedKeys,
      Duration maxManifestAge) {
    this(namespace, filterName, keyType, limits, trustedKeys, maxManifestAge, Set.of());
  }

  static final Verdict LOAD = new Verdict.Load();
  static final Verdict SAME = new Verdict.Same();

  /** The same rule for a reader configured for the object stores {@code names}. */
  Acceptance withStores(Set<String> names) {
    return new Acceptance(
        namespace, filterName, keyType, limits, trustedKeys, maxManifestAge, names);
  }

  /** The same rule for snapshots this reader verified itself before (no maximum age). */
  Acceptance withoutMaxAge() {
    return new Acceptance(namespace, filterName, keyType, limits, trustedKeys, null, stores);
  }

  /**
   * Judges {@code announced} against what is served.
   *
   * @param served the announcement of the snapshot served now, or null before the first
   * @param now the reader's clock, for the maximum age
   */
  Verdict judge(AnnouncedManifest announced, AnnouncedManifest served, Instant now) {
    Manifest manifest = announced.manifest();
    try {
      trustedKeys.verify(namespace, announced.json(), announced.signature());
      limits.check(manifest, filterName);
    } catch (SnapshotVerificationException e) {
      return new Verdict.Refuse(e);
    }
    if (manifest.inObjectStore() && !stores.contains(manifest.store())) {
      // Only the name is in the manifest; where the store is and how to reach it is this reader's
      // own configuration, so an unknown name cannot be resolved by anything the manifest says.
      return new Verdict.Refuse(
          new SnapshotRefusedException(
              LoadFailureReason.UNKNOWN_STORE,
              "manifest of "
                  + namespace
                  + "/"
                  + filterName
                  + " v"
                  + manifest.version()
                  + " keeps its chunks in object store '"
                  + manifest.store()
                  + "', which this reader is not configured for"
                  + (stores.isEmpty()
                      ? " (it has no object store)"
                      : " (it knows " + new java.util.TreeSet<>(stores) + ")")));
    }
    if (announced.announcesSameAs(served)) {
      return SAME;
    }
    if (maxManifestAge != null && manifest.created().isBefore(now.minus(maxManifestAge))) {
      return refuse(
          LoadFailureReason.TOO_OLD,
          manifest,
          "more than " + maxManifestAge + " ago; refused as too old");
    }
    if (served != null && !trustedKeys.isEmpty() && !manifest.publishedAfter(served.manifest())) {
      return refuse(
          LoadFailureReason.ROLLBACK,
          manifest,
          "not published after the served v"
              + served.version()
              + " created "
              + served.manifest().createdAt()
              + "; refused as a rollback");
    }
    if (manifest.keyType() != keyType) {
      return new Verdict.Refuse(
          new SnapshotVerificationException(
              "snapshot v"
                  + manifest.version()
                  + " of '"
                  + manifest.filterName()
                  + "' holds "
                  + manifest.keyType().crdName()
                  + " keys but this filter was created for "
                  + keyType.crdName()
                  + " keys"));
    }
    return LOAD;
  }

  private Verdict refuse(LoadFailureReason reason, Manifest manifest, String why) {
    return new Verdict.Refuse(
        new SnapshotRefusedException(
            reason,
            "signed manifest of "
                + namespace
                + "/"
                + filterName
                + " announces v"
                + manifest.version()
                + " created "
                + manifest.createdAt()
                + ", "
                + why));
  }
}
