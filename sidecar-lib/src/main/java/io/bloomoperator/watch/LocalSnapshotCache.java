package io.bloomoperator.watch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.bloomoperator.snapshot.AnnouncedManifest;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The last verified snapshot of one filter in a local directory (e.g. an emptyDir), so a restarted
 * container serves its filter before the API server answers.
 *
 * <p>Two files per filter, named after namespace and filter so several watchers can share a
 * directory:
 *
 * <ul>
 *   <li>{@code <ns>.<filter>.v<version>.payload}: the whole Guava payload of that version (for a
 *       chain, with its deltas applied: one file and no replay is the cheapest cold start)
 *   <li>{@code <ns>.<filter>.manifest.json}: {@code {"namespace", "filterName", "payloadFile",
 *       "manifest", "manifestJson", "signature"}}, where manifest is the snapshot's manifest.json,
 *       manifestJson its exact text and signature its manifest.sig (null if unsigned)
 * </ul>
 *
 * <p>Each file is written to a temporary name and renamed into place, payload first: the manifest
 * rename is the commit point, so a crash leaves either the old pair or the new one, never a
 * manifest pointing at a half-written payload. Reading re-verifies everything with {@link
 * SnapshotDecoder#decodeWhole} (payload SHA-256, size and header against manifest) plus namespace,
 * filter and key type, and applies the reader's limits (sizes, chunk names) and trusted keys
 * exactly as for a manifest from the API server, before the payload is read; anything off is logged
 * and ignored, never served.
 */
final class LocalSnapshotCache {

  private static final Logger LOG = LoggerFactory.getLogger(LocalSnapshotCache.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String MANIFEST_SUFFIX = ".manifest.json";
  private static final String PAYLOAD_SUFFIX = ".payload";
  private static final Set<PosixFilePermission> SHARED_PERMISSIONS =
      PosixFilePermissions.fromString("rw-r--r--");

  /** A manifest ConfigMap holds at most 1 MiB; its file here, with a signature, stays far below. */
  private static final long MAX_MANIFEST_FILE_BYTES = 4L * 1024 * 1024;

  private final Path directory;
  private final String namespace;
  private final String filterName;
  private final String prefix;
  private final Acceptance acceptance;
  private final MappedPayloads mapped; // null: snapshots are served from the heap
  private final boolean shared; // file mode: readable by the pod's other processes, and durable

  /**
   * @param acceptance the reader's rule: a stored snapshot is served only if it would be accepted
   *     from the API server with nothing served (no maximum age: this reader verified it before)
   */
  LocalSnapshotCache(Path directory, Acceptance acceptance) {
    this(directory, acceptance, null);
  }

  /**
   * @param usableSpace for a memory-mapped reader, how it learns the directory's free space; null
   *     for a reader that serves from the heap
   */
  LocalSnapshotCache(
      Path directory, Acceptance acceptance, MappedPayloads.UsableSpace usableSpace) {
    this(directory, acceptance, usableSpace, false);
  }

  /**
   * @param shared file mode: files readable by every user of the pod (0644, so other containers
   *     with other user ids can map them) and forced to disk before each rename, so that after a
   *     node restart that kept the volume a reader that does not verify finds an old complete
   *     version or the new one, never a torn file
   */
  LocalSnapshotCache(
      Path directory,
      Acceptance acceptance,
      MappedPayloads.UsableSpace usableSpace,
      boolean shared) {
    this.shared = shared;
    this.acceptance = acceptance.withoutMaxAge();
    this.directory = directory;
    this.namespace = acceptance.namespace();
    this.filterName = acceptance.filterName();
    // The label form of the name is at most 63 characters (long names are cut and hashed), which
    // keeps
    // file names under the usual 255-byte limit; the full names are checked inside the file.
    this.prefix = namespace + "." + SnapshotNames.filterLabelValue(filterName);
    this.mapped = usableSpace == null ? null : new MappedPayloads(this, usableSpace);
  }

  /** The memory-mapped loader of this directory, or null when snapshots live on the heap. */
  MappedPayloads mapped() {
    return mapped;
  }

  Path directory() {
    return directory;
  }

  /** The start of every file name of this filter's files. */
  String prefix() {
    return prefix;
  }

  Path manifestFile() {
    return directory.resolve(prefix + MANIFEST_SUFFIX);
  }

  Path payloadFile(long version) {
    return directory.resolve(prefix + ".v" + version + PAYLOAD_SUFFIX);
  }

  /**
   * The cached snapshot if there is one, the acceptance rule accepts it and it verifies; otherwise
   * empty (the reason is logged).
   */
  Optional<ServedSnapshot> read() {
    Path file = manifestFile();
    if (!Files.exists(file)) {
      LOG.info("no local snapshot of {}/{} in {}", namespace, filterName, directory);
      return Optional.empty();
    }
    try {
      return Optional.of(readVerified(file));
    } catch (IOException | SnapshotVerificationException | RuntimeException e) {
      LOG.warn(
          "ignoring local snapshot {} of {}/{}: {}", file, namespace, filterName, e.toString());
      return Optional.empty();
    }
  }

  private ServedSnapshot readVerified(Path file) throws IOException, SnapshotVerificationException {
    long fileSize = Files.size(file);
    if (fileSize > MAX_MANIFEST_FILE_BYTES) {
      throw new SnapshotVerificationException(
          "manifest file is " + fileSize + " bytes, more than " + MAX_MANIFEST_FILE_BYTES);
    }
    JsonNode root = JSON.readTree(Files.readString(file, StandardCharsets.UTF_8));
    if (root == null || !root.isObject()) {
      throw new SnapshotVerificationException("not a JSON object");
    }
    String fileNamespace = root.path("namespace").asText(null);
    String fileFilter = root.path("filterName").asText(null);
    if (!namespace.equals(fileNamespace) || !filterName.equals(fileFilter)) {
      throw new SnapshotVerificationException(
          "written for "
              + fileNamespace
              + "/"
              + fileFilter
              + ", not "
              + namespace
              + "/"
              + filterName);
    }
    // The exact text, when present (files of older versions only have the object): a signature
    // covers that text, not a re-serialisation of it.
    String json = root.path("manifestJson").isTextual() ? root.get("manifestJson").asText() : null;
    if (json == null) {
      JsonNode manifestNode = root.get("manifest");
      if (manifestNode == null || !manifestNode.isObject()) {
        throw new SnapshotVerificationException("no manifest object");
      }
      json = manifestNode.toString();
    }
    String signature = root.path("signature").isTextual() ? root.get("signature").asText() : null;
    AnnouncedManifest announced = new AnnouncedManifest(Manifest.fromJson(json), json, signature);
    if (acceptance.judge(announced, null, Instant.EPOCH)
        instanceof Acceptance.Verdict.Refuse refused) {
      throw refused.reason();
    }
    Manifest manifest = announced.manifest();
    // Derived, never taken from the file: a payloadFile of "../x" must not point outside the
    // directory.
    Path payload = payloadFile(manifest.version());
    if (!payload.getFileName().toString().equals(root.path("payloadFile").asText(null))) {
      throw new SnapshotVerificationException(
          "payloadFile does not match version " + manifest.version());
    }
    long size = Files.size(payload);
    if (size != manifest.totalBytes()) {
      throw new SnapshotVerificationException(
          "payload is " + size + " bytes, manifest says " + manifest.totalBytes());
    }
    if (mapped != null) {
      // Mapped first, then hashed: the digest covers the very bytes that will be served.
      return mapped.open(announced, payload);
    }
    try (InputStream in = Files.newInputStream(payload)) {
      // The materialised payload of the manifest's version, whatever its format (a chain's
      // deltas are already applied: the cheapest cold start). Header, size and the manifest's
      // payload sha256 are checked exactly as after a load from the API server.
      BloomFilterBits bits = SnapshotDecoder.decodeWhole(manifest, in);
      return new ServedSnapshot(announced, bits);
    }
  }

  /** Stores {@code snapshot} (already verified) and removes older payloads of this filter. */
  void write(ServedSnapshot snapshot) throws IOException {
    Files.createDirectories(directory);
    Path payload = payloadFile(snapshot.version());
    if (snapshot.file() == null) {
      writePayload(snapshot, payload);
    } else if (!snapshot.file().equals(payload)) {
      throw new IOException("a mapped snapshot must be served from " + payload);
    }
    // else: the served file is the payload already, written and verified by MappedPayloads.
    writeManifest(snapshot, payload);
    deleteOtherPayloads(payload);
  }

  private void writePayload(ServedSnapshot snapshot, Path payload) throws IOException {
    Path payloadTemp = Files.createTempFile(directory, prefix, ".payload.tmp");
    try {
      try (FileChannel channel = FileChannel.open(payloadTemp, StandardOpenOption.WRITE);
          OutputStream out = new BufferedOutputStream(Channels.newOutputStream(channel), 1 << 16)) {
        SnapshotEncoder.writeTo(snapshot.heapBits(), out);
        out.flush();
        // Alone, no fsync: the directory is meant to survive container restarts, which keep the
        // page cache, and after a node crash a torn file fails this reader's verification. Shared,
        // the pod's other readers may not verify: the bytes are on disk before the name is.
        if (shared) {
          channel.force(true);
        }
      }
      shareIfShared(payloadTemp);
      Files.move(
          payloadTemp,
          payload,
          StandardCopyOption.ATOMIC_MOVE,
          StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(payloadTemp);
    }
  }

  private void writeManifest(ServedSnapshot snapshot, Path payload) throws IOException {
    ObjectNode root = JSON.createObjectNode();
    root.put("namespace", namespace);
    root.put("filterName", filterName);
    root.put("payloadFile", payload.getFileName().toString());
    root.set("manifest", JSON.readTree(snapshot.announced().json()));
    root.put("manifestJson", snapshot.announced().json());
    root.put("signature", snapshot.announced().signature());
    Path manifestTemp = Files.createTempFile(directory, prefix, ".manifest.tmp");
    try {
      Files.writeString(
          manifestTemp,
          JSON.writerWithDefaultPrettyPrinter().writeValueAsString(root),
          StandardCharsets.UTF_8);
      if (shared) {
        try (FileChannel channel = FileChannel.open(manifestTemp, StandardOpenOption.WRITE)) {
          channel.force(true);
        }
      }
      shareIfShared(manifestTemp);
      Files.move(
          manifestTemp,
          manifestFile(),
          StandardCopyOption.ATOMIC_MOVE,
          StandardCopyOption.REPLACE_EXISTING);
      if (shared) {
        // The renames themselves: the directory entry of the new manifest (and payload) on disk.
        try (FileChannel dir = FileChannel.open(directory, StandardOpenOption.READ)) {
          dir.force(true);
        }
      }
    } finally {
      Files.deleteIfExists(manifestTemp);
    }
  }

  /**
   * Temporary files are created 0600; shared, the pod's other containers (other user ids, the same
   * volume) must be able to read and map them. Nothing in them is secret: any reader of the
   * namespace's ConfigMaps may read the same snapshot.
   */
  private void shareIfShared(Path file) throws IOException {
    if (shared) {
      Files.setPosixFilePermissions(file, SHARED_PERMISSIONS);
    }
  }

  private void deleteOtherPayloads(Path keep) throws IOException {
    try (DirectoryStream<Path> payloads =
        Files.newDirectoryStream(
            directory,
            path ->
                (isOwnPayload(path.getFileName().toString()) && !path.equals(keep))
                    || isStaleTemp(path))) {
      for (Path old : payloads) {
        try {
          Files.deleteIfExists(old);
        } catch (NoSuchFileException ignored) {
          // someone else cleaned up first
        }
      }
    }
  }

  /**
   * A temp file of this filter left by a process killed mid-write (full payload size each); old
   * enough that no live write can still own it.
   */
  private boolean isStaleTemp(Path path) {
    String name = path.getFileName().toString();
    String suffix =
        name.endsWith(".payload.tmp")
            ? ".payload.tmp"
            : name.endsWith(".manifest.tmp") ? ".manifest.tmp" : null;
    if (suffix == null || !name.startsWith(prefix)) {
      return false;
    }
    String random = name.substring(prefix.length(), name.length() - suffix.length());
    if (random.isEmpty() || !random.chars().allMatch(Character::isDigit)) {
      return false;
    }
    try {
      return Files.getLastModifiedTime(path)
          .toInstant()
          .isBefore(java.time.Instant.now().minus(java.time.Duration.ofMinutes(10)));
    } catch (IOException e) {
      return false;
    }
  }

  private boolean isOwnPayload(String name) {
    String start = prefix + ".v";
    if (!name.startsWith(start) || !name.endsWith(PAYLOAD_SUFFIX)) {
      return false;
    }
    // Only "<prefix>.v<digits>.payload": another filter's prefix may start with ours.
    String digits = name.substring(start.length(), name.length() - PAYLOAD_SUFFIX.length());
    return !digits.isEmpty() && digits.chars().allMatch(Character::isDigit);
  }
}
