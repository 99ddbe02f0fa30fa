package io.bloomoperator.cli;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.ManifestSigner;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.bloomoperator.snapshot.TrustedKeys;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * A snapshot as ConfigMap manifests in a directory, one YAML file per ConfigMap, each named after
 * its ConfigMap ({@code <filter>-bloom-v<version>-<index>.yaml} for chunks, {@code
 * <filter>-bloom.yaml} for the manifest). Since {@code '-' < '.'}, kubectl (which reads a directory
 * in file-name order) creates every chunk of a filter before its manifest, as
 * docs/snapshot-protocol.md asks of writers.
 */
final class SnapshotFiles {

  static final String EXTENSION = ".yaml";

  private static final List<String> YAML_EXTENSIONS = List.of(EXTENSION, ".yml");

  private final Path dir;

  SnapshotFiles(Path dir) {
    this.dir = dir;
  }

  Path dir() {
    return dir;
  }

  /** The file holding the ConfigMap {@code configMapName}. */
  Path file(String configMapName) {
    return dir.resolve(configMapName + EXTENSION);
  }

  /**
   * Files in the directory that belong to {@code filterName}: its manifest and the chunks of whole
   * payloads (the files this CLI writes), each as {@link SnapshotNames} names them.
   */
  List<Path> filesOf(String filterName) throws IOException {
    String manifest = SnapshotNames.manifestName(filterName);
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .filter(
              f -> {
                String name = stem(f.getFileName().toString());
                return name != null && (name.equals(manifest) || isChunk(filterName, name));
              })
          .sorted()
          .toList();
    }
  }

  private static boolean isChunk(String filterName, String name) {
    return SnapshotNames.ChunkName.parse(filterName, name).filter(c -> !c.delta()).isPresent();
  }

  /** The file name without its YAML extension ({@code .yaml} or {@code .yml}); null for others. */
  private static String stem(String fileName) {
    for (String extension : YAML_EXTENSIONS) {
      if (fileName.endsWith(extension)) {
        return fileName.substring(0, fileName.length() - extension.length());
      }
    }
    return null;
  }

  // ---------------------------------------------------------------- writing

  /** Writes one immutable chunk ConfigMap, labelled and named as the operator does. */
  Path writeChunk(
      String filterName, String namespace, long version, int index, byte[] data, int length)
      throws IOException {
    ConfigMap chunk = SnapshotConfigMaps.chunk(namespace, filterName, version, index, data, length);
    String name = chunk.getMetadata().getName();
    return write(name, chunk);
  }

  /**
   * Writes the manifest ConfigMap (mutable: the next version replaces its content), with {@code
   * manifest.sig} when {@code signer} is not null ({@code namespace} is then required).
   */
  Path writeManifest(Manifest manifest, String namespace, ManifestSigner signer)
      throws IOException {
    ConfigMap configMap = SnapshotConfigMaps.manifest(namespace, manifest, signer, null);
    String name = configMap.getMetadata().getName();
    return write(name, configMap);
  }

  private Path write(String name, ConfigMap configMap) throws IOException {
    Path target = file(name);
    Path temp = dir.resolve("." + name + EXTENSION + ".tmp");
    Files.writeString(temp, Serialization.asYaml(configMap), StandardCharsets.UTF_8);
    Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    return target;
  }

  // ---------------------------------------------------------------- reading

  /**
   * Reads and verifies the snapshot of {@code filterName}, or of the only filter in the directory
   * when {@code filterName} is null.
   */
  VerifiedSnapshot read(String filterName, TrustedKeys trusted, Long version) throws CliException {
    if (!Files.isDirectory(dir)) {
      throw new CliException(dir + " is not a directory");
    }
    Path manifestFile =
        filterName != null ? file(SnapshotNames.manifestName(filterName)) : onlyManifestFile();
    ConfigMap configMap = readConfigMap(manifestFile);
    if (configMap == null) {
      throw new CliException(
          "no manifest file " + manifestFile + " (is '" + filterName + "' the filter's name?)");
    }
    String json = SnapshotConfigMaps.manifestJson(configMap);
    if (json == null) {
      throw new CliException(
          manifestFile
              + " is not a snapshot manifest: it has no data key '"
              + SnapshotNames.MANIFEST_DATA_KEY
              + "'");
    }
    Manifest manifest;
    try {
      manifest = Manifest.fromJson(json);
    } catch (SnapshotVerificationException e) {
      throw new CliException("verification failed: " + manifestFile + ": " + e.getMessage(), e);
    }
    String expectedName = SnapshotNames.manifestName(manifest.filterName());
    if (!expectedName.equals(configMap.getMetadata().getName())) {
      throw new CliException(
          "verification failed: "
              + manifestFile
              + " holds ConfigMap '"
              + configMap.getMetadata().getName()
              + "' but its manifest is for filter '"
              + manifest.filterName()
              + "' (expected ConfigMap '"
              + expectedName
              + "')");
    }
    String signature =
        ManifestTrust.check(
            manifest,
            json,
            SnapshotConfigMaps.signatureData(configMap),
            configMap.getMetadata().getNamespace(),
            trusted);
    try {
      BloomFilterBits bits =
          SnapshotDecoder.decodeVersion(
              manifest, version == null ? manifest.version() : version, this::loadChunk);
      return new VerifiedSnapshot(manifest, bits, "directory " + dir, signature);
    } catch (SnapshotVerificationException e) {
      String where =
          e.chunkIndex() >= 0 && !manifest.chained()
              ? " (file " + file(manifest.chunks().get(e.chunkIndex()).name()) + ")"
              : "";
      throw new CliException("verification failed: " + e.getMessage() + where, e);
    } catch (IOException e) {
      throw new CliException(e.getMessage(), e);
    }
  }

  private Path onlyManifestFile() throws CliException {
    List<Path> manifests = new ArrayList<>();
    try (Stream<Path> files = Files.list(dir)) {
      files
          .filter(
              f -> {
                String name = f.getFileName().toString();
                return name.endsWith(SnapshotNames.MANIFEST_SUFFIX + ".yaml")
                    || name.endsWith(SnapshotNames.MANIFEST_SUFFIX + ".yml");
              })
          .sorted()
          .forEach(manifests::add);
    } catch (IOException e) {
      throw new CliException("cannot list " + dir + ": " + e.getMessage(), e);
    }
    if (manifests.isEmpty()) {
      throw new CliException(
          "no snapshot manifest (*" + SnapshotNames.MANIFEST_SUFFIX + ".yaml) in " + dir);
    }
    if (manifests.size() > 1) {
      throw new CliException(
          dir
              + " holds manifests of several filters ("
              + String.join(", ", manifests.stream().map(p -> p.getFileName().toString()).toList())
              + "); pick one with --name");
    }
    return manifests.get(0);
  }

  private byte[] loadChunk(int index, Manifest.ChunkRef ref) throws IOException {
    Path path = file(ref.name());
    ConfigMap chunk;
    try {
      chunk = readConfigMap(path);
    } catch (CliException e) {
      throw new IOException(e.getMessage(), e);
    }
    if (chunk == null) {
      return null; // the decoder reports it as missing, naming the chunk
    }
    if (!ref.name().equals(chunk.getMetadata() == null ? null : chunk.getMetadata().getName())) {
      throw new IOException(
          "verification failed: "
              + path
              + " holds ConfigMap '"
              + (chunk.getMetadata() == null ? null : chunk.getMetadata().getName())
              + "', expected chunk "
              + index
              + " '"
              + ref.name()
              + "'");
    }
    try {
      return SnapshotConfigMaps.chunkBytes(
          chunk, ref.bytes(), "chunk " + index + " ('" + ref.name() + "', file " + path + ")");
    } catch (IOException e) {
      throw new IOException("verification failed: " + e.getMessage(), e);
    }
  }

  /** The ConfigMap in {@code path}, or null if there is no such file. */
  private static ConfigMap readConfigMap(Path path) throws CliException {
    Object parsed;
    try (InputStream in = Files.newInputStream(path)) {
      parsed = Serialization.unmarshal(in);
    } catch (NoSuchFileException e) {
      return null;
    } catch (IOException | RuntimeException e) {
      throw new CliException(
          "cannot parse " + path + " as a Kubernetes object: " + e.getMessage(), e);
    }
    if (!(parsed instanceof ConfigMap configMap)) {
      throw new CliException(
          path
              + " does not hold a ConfigMap"
              + (parsed == null ? "" : " but a " + parsed.getClass().getSimpleName()));
    }
    return configMap;
  }
}
