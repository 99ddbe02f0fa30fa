package io.bloomoperator.snapshot;

import java.io.IOException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Where one filter's chunks live: the seam between the snapshot protocol and a transport. The
 * manifest names chunks by role, version and index; a store keeps their bytes under names of its
 * own and knows nothing of manifests, signatures or bookkeeping. Today's implementation keeps each
 * chunk in a ConfigMap ({@link ConfigMapChunkStore}); an object store is a second implementation of
 * exactly these operations.
 *
 * <p>Contract: a chunk is immutable once created (create, never overwrite); {@link #load} (from
 * {@link SnapshotDecoder.ChunkSource}) returns null for a missing chunk and never reads more than
 * the manifest announces; deletes remove only chunks this store's filter owns, each only as it was
 * when listed or created, so a chunk that another writer created under the same name stays.
 */
public interface ChunkStore extends SnapshotDecoder.ChunkSource {

  /** Whether a chunk holds part of a whole payload (a base) or of a delta. */
  enum Role {
    BASE,
    DELTA
  }

  /** The chunks of one version in one role: the unit a manifest names and a clean-up keeps. */
  record Part(Role role, long version) {

    /** A version's whole payload. */
    public static Part base(long version) {
      return new Part(Role.BASE, version);
    }

    /** The delta that produces {@code version}. */
    public static Part delta(long version) {
      return new Part(Role.DELTA, version);
    }

    /** The parts {@code manifest} names: its base and each delta of its chain. */
    public static Set<Part> of(Manifest manifest) {
      Set<Part> parts = new LinkedHashSet<>();
      parts.add(base(manifest.baseVersion()));
      manifest.deltas().forEach(d -> parts.add(delta(d.version())));
      return parts;
    }
  }

  /**
   * A chunk as stored.
   *
   * @param name the chunk's name in the store
   * @param revision what identifies exactly this object (a ConfigMap's resourceVersion, an object's
   *     ETag), the precondition of its delete; null when unknown (a create that failed may have
   *     been applied), so only an ownership check guards its delete
   */
  record Stored(String name, Part part, String revision) {}

  /** A chunk's name is taken by an object the store's filter does not own; it is left untouched. */
  final class NameTakenException extends IOException {
    private final String name;

    public NameTakenException(String name, Throwable cause) {
      super("chunk " + name + " already exists and is not this filter's", cause);
      this.name = name;
    }

    /** The taken name. */
    public String name() {
      return name;
    }
  }

  /** The name chunk {@code index} of {@code part} has (or would have) in this store. */
  String name(Part part, int index);

  /**
   * Creates chunk {@code index} of {@code part} from the first {@code length} bytes of {@code
   * data}, whose SHA-256 is {@code sha256} (a transport may store it as a checksum).
   *
   * @throws NameTakenException if the name holds an object this filter does not own
   */
  Stored create(Part part, int index, byte[] data, int length, String sha256) throws IOException;

  /** Every chunk this filter owns, without their bytes. */
  List<Stored> list() throws IOException;

  /**
   * Deletes {@code chunk} if it is still the object that was created or listed (or, with no
   * revision, if this filter owns it).
   *
   * @return false if it could not be deleted (it is left for the next clean-up)
   */
  boolean delete(Stored chunk);

  /** Deletes every chunk this filter owns that belongs to none of {@code keep}. */
  void deleteExcept(Set<Part> keep) throws IOException;

  /**
   * As {@link #deleteExcept(Set)}; a store that can hold several chunks of one name (object keys
   * carry the chunk's digest) also deletes the chunks of the parts {@code published} names that it
   * does not name: what a publish of that same version left when it was interrupted and the version
   * was then built again with other content. Such chunks belong to a kept part, yet no manifest
   * will ever name them.
   *
   * @param published the published manifest, or null
   */
  default void deleteExcept(Set<Part> keep, Manifest published) throws IOException {
    deleteExcept(keep);
  }
}
