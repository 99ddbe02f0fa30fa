package io.bloomoperator.watch;

import io.bloomoperator.snapshot.AnnouncedManifest;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.InPlaceDeltas;
import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotRefusedException;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import java.io.IOException;
import java.util.Map;
import java.util.Optional;

/**
 * Fetches and verifies the bits of an accepted announcement through a chunk source (the API server
 * in production: one GET per chunk, by name, in order, so at most one chunk is held besides the
 * filter being built), or, for a manifest that names an object store, through that store as this
 * reader configured it. Decides nothing about the manifest: that was {@link Acceptance}'s.
 */
final class SnapshotFetcher {

  private final SnapshotDecoder.ChunkSource chunks;
  private final String namespace;
  private final String filterName;
  private final Map<String, ObjectStore> stores;
  private final MappedPayloads mapped; // null: decode onto the heap

  SnapshotFetcher(SnapshotDecoder.ChunkSource chunks) {
    this(chunks, null, null, Map.of());
  }

  SnapshotFetcher(
      SnapshotDecoder.ChunkSource chunks,
      String namespace,
      String filterName,
      Map<String, ObjectStore> stores) {
    this(chunks, namespace, filterName, stores, null);
  }

  /**
   * @param chunks the ConfigMap chunks of the filter's namespace
   * @param stores the object stores this reader is configured for, by name
   * @param mapped where a memory-mapped reader writes its payload files; null for the heap
   */
  SnapshotFetcher(
      SnapshotDecoder.ChunkSource chunks,
      String namespace,
      String filterName,
      Map<String, ObjectStore> stores,
      MappedPayloads mapped) {
    this.mapped = mapped;
    this.chunks = chunks;
    this.namespace = namespace;
    this.filterName = filterName;
    this.stores = Map.copyOf(stores);
  }

  /**
   * What a load produced: the snapshot to serve and, when {@code inPlace} is not null, the deltas
   * to set in the served bits (which {@code snapshot} shares) just before it is installed.
   */
  record Fetched(ServedSnapshot snapshot, InPlaceDeltas inPlace) {}

  /**
   * The snapshot of {@code announced}: when {@code held} (served now, or null) is a version of the
   * announced chain, only the deltas after it are fetched and applied to a copy of its bits;
   * otherwise the base and every delta.
   *
   * @throws SnapshotVerificationException if a chunk is missing or any size, digest or header check
   *     fails
   * @throws IOException if a chunk has no binary data or not the announced amount of it
   */
  ServedSnapshot fetch(AnnouncedManifest announced, ServedSnapshot held)
      throws SnapshotVerificationException, IOException {
    return fetch(announced, held, false).snapshot();
  }

  /**
   * As {@link #fetch(AnnouncedManifest, ServedSnapshot)}; with {@code inPlace}, deltas after a
   * {@code held} snapshot on the heap that only turn bits on are not applied to a copy but returned
   * verified ({@link InPlaceDeltas}: every chunk's size and digest, header and positions checked,
   * nothing set yet) for the caller to set in the held bits. Deltas that clear a bit are applied to
   * a copy from the positions already fetched and verified whole, as without {@code inPlace}.
   * Mapped snapshots are never changed in place: their file is the local snapshot of one version.
   */
  Fetched fetch(AnnouncedManifest announced, ServedSnapshot held, boolean inPlace)
      throws SnapshotVerificationException, IOException {
    Manifest manifest = announced.manifest();
    if (!manifest.inObjectStore()) {
      return load(announced, held, inPlace, chunks);
    }
    ObjectStore store = stores.get(manifest.store());
    if (store == null) {
      // Acceptance refuses these first; kept so that no path reads a store it was not given.
      throw new SnapshotRefusedException(
          LoadFailureReason.UNKNOWN_STORE, "no object store named " + manifest.store());
    }
    try (StoreChunkSource download =
        StoreChunkSource.open(store, namespace, filterName, manifest)) {
      return load(announced, held, inPlace, download);
    }
  }

  private Fetched load(
      AnnouncedManifest announced,
      ServedSnapshot held,
      boolean inPlace,
      SnapshotDecoder.ChunkSource source)
      throws SnapshotVerificationException, IOException {
    if (mapped != null) {
      return new Fetched(mapped.load(announced, held, source), null);
    }
    BloomFilterBits heldBits = held == null ? null : held.heapBits();
    if (inPlace && heldBits != null) {
      Optional<InPlaceDeltas> deltas =
          InPlaceDeltas.fetch(
              announced.manifest(), heldBits, held.version(), held.manifest().sha256(), source);
      if (deltas.isPresent()) {
        return deltas.get().addOnly()
            ? new Fetched(new ServedSnapshot(announced, heldBits), deltas.get())
            : new Fetched(new ServedSnapshot(announced, deltas.get().applyToCopy()), null);
      }
    }
    return new Fetched(
        new ServedSnapshot(announced, decode(announced.manifest(), held, source)), null);
  }

  private static BloomFilterBits decode(
      Manifest manifest, ServedSnapshot held, SnapshotDecoder.ChunkSource source)
      throws SnapshotVerificationException, IOException {
    return held == null
        ? SnapshotDecoder.decode(manifest, source)
        : SnapshotDecoder.update(
            manifest, held.heapBits(), held.version(), held.manifest().sha256(), source);
  }
}
