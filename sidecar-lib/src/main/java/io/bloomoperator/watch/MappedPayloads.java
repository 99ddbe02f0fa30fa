package io.bloomoperator.watch;

import io.bloomoperator.snapshot.AnnouncedManifest;
import io.bloomoperator.snapshot.BloomLookup;
import io.bloomoperator.snapshot.LocalDiskException;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.MappedBloomFilterBits;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotFiles;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads versions of one filter into payload files of the local snapshot directory and serves them
 * memory-mapped ({@link BloomFilterWatcher.Builder#memoryMapped}), so that a swap costs disk and
 * page cache instead of a second filter on the heap.
 *
 * <p>A version is written by this reader alone, under a temporary name it creates (owner read and
 * write only), chunk by verified chunk, or, for a delta, as a copy of the served file whose SHA-256
 * is checked during the copy, with the delta's bits flipped in the file and the result's SHA-256
 * checked on the mapping. It is flushed to disk, renamed to {@code
 * <ns>.<filter>.v<version>.payload} (the local snapshot's name) and only then served. A failure
 * anywhere deletes the temporary file and leaves the served version as it was.
 *
 * <p>Disk use is bounded to the served file and the one being written: the size is checked against
 * the directory's usable space before anything is fetched, and the previous file is deleted once
 * the new one is served ({@link LocalSnapshotCache#write}).
 */
final class MappedPayloads {

  private static final Logger LOG = LoggerFactory.getLogger(MappedPayloads.class);

  private static final Set<PosixFilePermission> OWNER_ONLY =
      EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);

  /** The usable bytes of a directory's file system: the seam through which tests fill the disk. */
  @FunctionalInterface
  interface UsableSpace {
    long of(Path directory) throws IOException;
  }

  static final UsableSpace FILE_STORE = directory -> Files.getFileStore(directory).getUsableSpace();

  private final LocalSnapshotCache names;
  private final Path directory;
  private final UsableSpace usableSpace;

  MappedPayloads(LocalSnapshotCache names, UsableSpace usableSpace) {
    this.names = names;
    this.directory = names.directory();
    this.usableSpace = usableSpace;
  }

  /**
   * The verified, mapped snapshot of {@code announced}: when {@code held} (served now, or null) is
   * a version of the announced chain and its file is intact, only the deltas after it are fetched;
   * otherwise the base and every delta.
   *
   * @throws LocalDiskException if the directory cannot take the file (too little usable space,
   *     missing or not writable, an I/O error)
   * @throws SnapshotVerificationException if a chunk or the result fails a check
   * @throws IOException whatever {@code source} throws
   */
  ServedSnapshot load(
      AnnouncedManifest announced, ServedSnapshot held, SnapshotDecoder.ChunkSource source)
      throws SnapshotVerificationException, IOException {
    Manifest manifest = announced.manifest();
    manifest.validate();
    Path temp = createTemp(manifest.totalBytes());
    try {
      MappedBloomFilterBits bits;
      try (FileChannel out =
          FileChannel.open(temp, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
        bits = updateFromHeld(manifest, held, source, out);
        if (bits == null) {
          SnapshotFiles.writeBase(manifest, source, out);
          if (manifest.chained()) {
            SnapshotFiles.applyDeltas(manifest, manifest.deltas(), out, source);
            bits = SnapshotFiles.mapVerified(manifest, out, manifest.sha256());
          } else {
            // writeBase checked the digest of exactly the bytes it wrote to this file, which only
            // this reader can write: hashing them again would double the cost of a whole load.
            bits = SnapshotFiles.mapWritten(manifest, out);
          }
        }
        force(out);
      }
      Path target = names.payloadFile(manifest.version());
      try {
        Files.move(
            temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (IOException e) {
        throw new LocalDiskException("could not rename the payload file into place: " + e, e);
      }
      return new ServedSnapshot(announced, bits, target);
    } finally {
      Files.deleteIfExists(temp);
    }
  }

  /**
   * The verified mapping of a payload file found in the directory (a restart), or an exception: its
   * size, header and SHA-256 are checked on the mapping before it is returned.
   */
  ServedSnapshot open(AnnouncedManifest announced, Path payload)
      throws SnapshotVerificationException, LocalDiskException {
    try (FileChannel in = FileChannel.open(payload, StandardOpenOption.READ)) {
      Manifest manifest = announced.manifest();
      return new ServedSnapshot(
          announced, SnapshotFiles.mapVerified(manifest, in, manifest.sha256()), payload);
    } catch (LocalDiskException e) {
      throw e;
    } catch (IOException e) {
      throw new LocalDiskException("could not open the local payload file: " + e, e);
    }
  }

  /**
   * The new version built from a copy of the held file plus the deltas after it, verified; null
   * when that is not possible (no held file, not a version of this chain, or the held file changed
   * on disk since it was verified), with {@code out} left empty for a whole load.
   */
  private MappedBloomFilterBits updateFromHeld(
      Manifest manifest, ServedSnapshot held, SnapshotDecoder.ChunkSource source, FileChannel out)
      throws SnapshotVerificationException, IOException {
    if (held == null || held.file() == null || !sameGeometry(manifest, held.bits())) {
      return null;
    }
    Optional<List<Manifest.Delta>> deltas =
        manifest.deltasAfter(held.version(), held.manifest().sha256());
    if (deltas.isEmpty()) {
      return null;
    }
    boolean intact;
    try (FileChannel from = FileChannel.open(held.file(), StandardOpenOption.READ)) {
      intact =
          SnapshotFiles.copyIfIntact(from, manifest.totalBytes(), held.manifest().sha256(), out);
    } catch (IOException e) {
      LOG.warn(
          "{}: cannot read the served payload file ({}); loading the whole chain",
          held.file(),
          e.toString());
      intact = false;
    }
    if (!intact) {
      LOG.warn(
          "{} no longer has the digest it was served with (changed on disk?); loading v{} from"
              + " its base instead of applying the delta to it",
          held.file(),
          manifest.version());
      truncate(out);
      return null;
    }
    SnapshotFiles.applyDeltas(manifest, deltas.get(), out, source);
    return SnapshotFiles.mapVerified(manifest, out, manifest.sha256());
  }

  private static boolean sameGeometry(Manifest manifest, BloomLookup bits) {
    return manifest.keyType() == bits.keyType()
        && manifest.filterFormat() == bits.format()
        && manifest.numBits() == bits.numBits()
        && manifest.numHashFunctions() == bits.numHashFunctions();
  }

  /**
   * A new, empty, owner-only file for a payload of {@code bytes}, after checking that the
   * directory's file system has room for it.
   */
  private Path createTemp(long bytes) throws LocalDiskException {
    try {
      Files.createDirectories(directory);
      long usable = usableSpace.of(directory);
      if (usable < bytes) {
        throw new LocalDiskException(
            "the local snapshot directory "
                + directory
                + " has "
                + usable
                + " bytes usable, the new version needs "
                + bytes,
            null);
      }
      boolean posix = Files.getFileStore(directory).supportsFileAttributeView("posix");
      FileAttribute<?>[] attributes =
          posix
              ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(OWNER_ONLY)}
              : new FileAttribute<?>[0];
      return Files.createTempFile(directory, names.prefix(), ".payload.tmp", attributes);
    } catch (LocalDiskException e) {
      throw e;
    } catch (IOException | UnsupportedOperationException e) {
      throw new LocalDiskException("could not create a payload file in " + directory + ": " + e, e);
    }
  }

  private static void force(FileChannel out) throws LocalDiskException {
    try {
      out.force(true);
    } catch (IOException e) {
      throw new LocalDiskException("could not flush the payload file to disk: " + e, e);
    }
  }

  private static void truncate(FileChannel out) throws LocalDiskException {
    try {
      out.truncate(0);
    } catch (IOException e) {
      throw new LocalDiskException("could not truncate the payload file: " + e, e);
    }
  }
}
