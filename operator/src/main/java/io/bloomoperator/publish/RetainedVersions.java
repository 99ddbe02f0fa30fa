package io.bloomoperator.publish;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.bloomoperator.api.BloomFilterStatus;
import io.bloomoperator.api.RetainedVersion;
import io.bloomoperator.api.SnapshotSpec;
import io.bloomoperator.snapshot.ChunkStore.Part;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.fabric8.kubernetes.api.model.ConfigMap;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The manifests of superseded versions whose chunks are kept (spec.snapshot.keepVersions), newest
 * first, stored next to the published manifest in its ConfigMap under {@value #DATA_KEY}: one write
 * publishes a version and retains the one it replaces, and the namespace budget counts both from
 * the same object. Readers ignore the key.
 *
 * <p>Whoever may edit ConfigMaps can edit this key too, so it is only ever published again when
 * each manifest's {@link #digest} matches the operator's record in {@code status.retainedVersions}
 * ({@link #trusted}); the janitor and the budget use it as it is (an edit can only keep more of the
 * filter's own chunks, and costs its own namespace's budget).
 */
public record RetainedVersions(List<Manifest> manifests) {

  /** The manifest ConfigMap's data key. */
  public static final String DATA_KEY = "retained.json";

  /**
   * Longest text read or written: with the manifest and its signature the ConfigMap stays far below
   * the API server's 1 MiB; the oldest versions are dropped to stay within it.
   */
  static final int MAX_TEXT_CHARS = 256 * 1024;

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final String DOMAIN = "bloomoperator.io/retained-manifest/v1\n";

  /** None retained. */
  public static final RetainedVersions NONE = new RetainedVersions(List.of());

  public RetainedVersions {
    manifests = List.copyOf(manifests);
  }

  /**
   * The retained manifests {@code configMap} holds, at most {@link SnapshotSpec#MAX_KEEP_VERSIONS};
   * entries that do not parse or validate are skipped, a text over the bound reads as none.
   */
  public static RetainedVersions of(ConfigMap configMap) {
    Map<String, String> data = configMap == null ? null : configMap.getData();
    String text = data == null ? null : data.get(DATA_KEY);
    if (text == null || text.length() > MAX_TEXT_CHARS) {
      return NONE;
    }
    List<Manifest> parsed = new ArrayList<>();
    try {
      JsonNode tree = MAPPER.readTree(text);
      if (!tree.isArray()) {
        return NONE;
      }
      for (JsonNode entry : tree) {
        if (parsed.size() == SnapshotSpec.MAX_KEEP_VERSIONS) {
          break;
        }
        try {
          parsed.add(Manifest.fromJson(entry.toString()));
        } catch (SnapshotVerificationException e) {
          // hand-edited: that version is simply not retained
        }
      }
    } catch (JsonProcessingException e) {
      return NONE;
    }
    return new RetainedVersions(parsed);
  }

  /**
   * The list after {@code replaced} (the manifest a new version supersedes, trusted; null: none)
   * goes in front: at most {@code keep} manifests, one per version, and no more than fits {@link
   * #MAX_TEXT_CHARS}.
   */
  public RetainedVersions after(Manifest replaced, int keep) {
    Map<Long, Manifest> byVersion = new LinkedHashMap<>();
    if (replaced != null) {
      byVersion.put(replaced.version(), replaced);
    }
    manifests.forEach(m -> byVersion.putIfAbsent(m.version(), m));
    List<Manifest> kept = new ArrayList<>(byVersion.values());
    kept = new ArrayList<>(kept.subList(0, Math.min(Math.max(keep, 0), kept.size())));
    while (!kept.isEmpty() && new RetainedVersions(kept).toData().length() > MAX_TEXT_CHARS) {
      kept.remove(kept.size() - 1);
    }
    return new RetainedVersions(kept);
  }

  /** The first {@code keep} of them: what spec.snapshot.keepVersions still retains. */
  public RetainedVersions first(int keep) {
    return new RetainedVersions(
        manifests.subList(0, Math.min(Math.max(keep, 0), manifests.size())));
  }

  /**
   * Only the manifests the operator recorded in {@code status.retainedVersions} (same version and
   * {@link #digest}): what may be published again.
   */
  public RetainedVersions trusted(BloomFilterStatus status) {
    Set<String> recorded = new HashSet<>();
    if (status != null && status.getRetainedVersions() != null) {
      for (RetainedVersion r : status.getRetainedVersions()) {
        recorded.add(r.getVersion() + "/" + r.getManifestDigest());
      }
    }
    return new RetainedVersions(
        manifests.stream().filter(m -> recorded.contains(m.version() + "/" + digest(m))).toList());
  }

  /** The retained manifest of {@code version}. */
  public Optional<Manifest> version(long version) {
    return manifests.stream().filter(m -> m.version() == version).findFirst();
  }

  /** The {@value #DATA_KEY} text. */
  public String toData() {
    ArrayNode array = MAPPER.createArrayNode();
    for (Manifest manifest : manifests) {
      try {
        array.add(MAPPER.readTree(manifest.toJson()));
      } catch (JsonProcessingException e) {
        throw new IllegalStateException("a manifest's own JSON does not parse", e);
      }
    }
    return array.toString();
  }

  /** Every chunk part the retained manifests name: the janitor keeps them. */
  public Set<Part> parts() {
    Set<Part> parts = new LinkedHashSet<>();
    manifests.forEach(m -> parts.addAll(Part.of(m)));
    return parts;
  }

  /**
   * What the retained chunks that {@code published} does not name hold in etcd, overhead included:
   * counted against the namespace budget on top of the published chain.
   */
  public long storedBytesBeyond(Manifest published) {
    return storedBytesBeyond(manifests, published);
  }

  /**
   * What the chunks of {@code manifests} that {@code published} does not name hold in etcd,
   * overhead included, each part counted once.
   */
  static long storedBytesBeyond(List<Manifest> manifests, Manifest published) {
    Set<Part> counted = published == null ? new HashSet<>() : new HashSet<>(Part.of(published));
    long bytes = 0;
    long objects = 0;
    for (Manifest manifest : manifests) {
      if (counted.add(Part.base(manifest.baseVersion()))) {
        bytes += manifest.baseBytes();
        objects += manifest.chunks().size();
      }
      for (Manifest.Delta delta : manifest.deltas()) {
        if (counted.add(Part.delta(delta.version()))) {
          bytes += delta.bytes();
          objects += delta.chunks().size();
        }
      }
    }
    return objects == 0 ? 0 : WriteBudget.Limits.cost(bytes, objects);
  }

  /** The status records of these manifests, newest first. */
  public List<RetainedVersion> records() {
    List<RetainedVersion> records = new ArrayList<>();
    for (Manifest manifest : manifests) {
      RetainedVersion record = new RetainedVersion();
      record.setVersion(manifest.version());
      record.setKeys(manifest.keyCount());
      record.setCreatedAt(manifest.createdAt());
      record.setSha256(manifest.sha256());
      record.setManifestDigest(digest(manifest));
      records.add(record);
    }
    return records;
  }

  /** SHA-256 (hex) of {@code manifest}'s canonical JSON, domain-separated. */
  public static String digest(Manifest manifest) {
    try {
      MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
      sha256.update(DOMAIN.getBytes(StandardCharsets.UTF_8));
      sha256.update(manifest.toJson().getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(sha256.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required by the Java SE specification", e);
    }
  }
}
