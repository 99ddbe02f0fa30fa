package io.bloomoperator.watch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotLimits;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.bloomoperator.snapshot.TrustedKeys;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Optional;
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

  /** A manifest ConfigMap holds at most 1 MiB; its file here, with a signature, stays far below. */
  private static final long MAX_MANIFEST_FILE_BYTES = 4L * 1024 * 1024;

  private final Path directory;
  private final String namespace;
  private final String filterName;
  private final String prefix;
  private final SnapshotLimits limits;
  private final TrustedKeys trustedKeys;

  LocalSnapshotCache(Path directory, String namespace, String filterName) {
    this(directory, namespace, filterName, SnapshotLimits.forThisHeap(), TrustedKeys.none());
  }

  LocalSnapshotCache(
      Path directory,
      String namespace,
      String filterName,
      SnapshotLimits limits,
      TrustedKeys trustedKeys) {
    this.limits = limits;
    this.trustedKeys = trustedKeys;
    this.directory = directory;
    this.namespace = namespace;
    this.filterName = filterName;
    // The label form of the name is at most 63 characters (long names are cut and hashed), which
    // keeps
    // file names under the usual 255-byte limit; the full names are checked inside the file.
    this.prefix = namespace + "." + SnapshotNames.filterLabelValue(filterName);
  }

  Path manifestFile() {
    return directory.resolve(prefix + MANIFEST_SUFFIX);
  }

  Path payloadFile(long version) {
    return directory.resolve(prefix + ".v" + version + PAYLOAD_SUFFIX);
  }

  /**
   * The cached snapshot if there is one and it verifies; otherwise empty (the reason is logged).
   *
   * @param expected the key type the caller serves; a cached snapshot of another type is ignored
   */
  Optional<LoadedSnapshot> read(KeyType expected) {
    Path file = manifestFile();
    if (!Files.exists(file)) {
      LOG.info("no local snapshot of {}/{} in {}", namespace, filterName, directory);
      return Optional.empty();
    }
    try {
      return Optional.of(readVerified(file, expected));
    } catch (IOException | SnapshotVerificationException | RuntimeException e) {
      LOG.warn(
          "ignoring local snapshot {} of {}/{}: {}", file, namespace, filterName, e.toString());
      return Optional.empty();
    }
  }

  private LoadedSnapshot readVerified(Path file, KeyType expected)
      throws IOException, SnapshotVerificationException {
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
    Manifest manifest = Manifest.fromJson(json);
    trustedKeys.verify(namespace, json, signature);
    limits.check(manifest, filterName);
    ApiSnapshotLoader.requireKeyType(manifest, expected);
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
    try (InputStream in = Files.newInputStream(payload)) {
      // The materialised payload of the manifest's version, whatever its format (a chain's
      // deltas are already applied: the cheapest cold start). Header, size and the manifest's
      // payload sha256 are checked exactly as after a load from the API server.
      BloomFilterBits bits = SnapshotDecoder.decodeWhole(manifest, in);
      return new LoadedSnapshot(manifest, bits, json, signature);
    }
  }

  /** Stores {@code snapshot} (already verified) and removes older payloads of this filter. */
  void write(LoadedSnapshot snapshot) throws IOException {
    Files.createDirectories(directory);
    Path payload = payloadFile(snapshot.version());
    Path payloadTemp = Files.createTempFile(directory, prefix, ".payload.tmp");
    try {
      try (OutputStream out =
          new BufferedOutputStream(Files.newOutputStream(payloadTemp), 1 << 16)) {
        SnapshotEncoder.writeTo(snapshot.bits(), out);
      }
      // No fsync: the directory is meant to survive container restarts, which keep the page cache;
      // after
      // a node crash a torn file fails verification and is ignored.
      Files.move(
          payloadTemp,
          payload,
          StandardCopyOption.ATOMIC_MOVE,
          StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(payloadTemp);
    }

    ObjectNode root = JSON.createObjectNode();
    root.put("namespace", namespace);
    root.put("filterName", filterName);
    root.put("payloadFile", payload.getFileName().toString());
    root.set("manifest", JSON.readTree(snapshot.manifestJson()));
    root.put("manifestJson", snapshot.manifestJson());
    root.put("signature", snapshot.signature());
    Path manifestTemp = Files.createTempFile(directory, prefix, ".manifest.tmp");
    try {
      Files.writeString(
          manifestTemp,
          JSON.writerWithDefaultPrettyPrinter().writeValueAsString(root),
          StandardCharsets.UTF_8);
      Files.move(
          manifestTemp,
          manifestFile(),
          StandardCopyOption.ATOMIC_MOVE,
          StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(manifestTemp);
    }
    deleteOtherPayloads(payload);
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
