package io.bloomoperator.publish;

import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.fabric8.kubernetes.api.model.ConfigMap;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;

/**
 * The digests by which the operator recognises the manifest ConfigMap it wrote, kept in the
 * BloomFilter status (which whoever may only write ConfigMaps cannot change): {@link
 * #manifestDigest} over what readers act on ({@code manifest.json} exactly as stored and {@code
 * manifest.sig}), {@link #buildRecordDigest} over what the operator decides rebuilds by (source
 * token, spec generation, built-at) and resumes a stream from (its position and slot). The
 * janitor's bookkeeping annotations are left out: the janitor rewrites them without a publish.
 * Lower-case hex SHA-256, fields length-prefixed and an absent one distinct from an empty one, so
 * no two different contents digest alike.
 */
public final class ManifestRecord {

  private static final String MANIFEST_DOMAIN = "bloomoperator.io/manifest-record/v1\n";
  private static final String BUILD_RECORD_DOMAIN = "bloomoperator.io/build-record/v1\n";

  private ManifestRecord() {}

  /** The digest of {@code configMap}'s manifest.json and manifest.sig as they are now. */
  public static String manifestDigest(ConfigMap configMap) {
    MessageDigest sha256 = newDigest(MANIFEST_DOMAIN);
    field(sha256, SnapshotConfigMaps.manifestJson(configMap));
    field(sha256, SnapshotConfigMaps.signatureData(configMap));
    return HexFormat.of().formatHex(sha256.digest());
  }

  /** The digest of {@code configMap}'s build record annotations as they are now. */
  public static String buildRecordDigest(ConfigMap configMap) {
    MessageDigest sha256 = newDigest(BUILD_RECORD_DOMAIN);
    Map<String, String> annotations = configMap.getMetadata().getAnnotations();
    for (String key :
        new String[] {
          SnapshotConfigMaps.ANNOTATION_SOURCE_TOKEN,
          SnapshotConfigMaps.ANNOTATION_SPEC_GENERATION,
          SnapshotConfigMaps.ANNOTATION_BUILT_AT
        }) {
      field(sha256, annotations == null ? null : annotations.get(key));
    }
    // Only when present, so the digests recorded before streams existed still match.
    String position =
        annotations == null ? null : annotations.get(SnapshotConfigMaps.ANNOTATION_STREAM_POSITION);
    if (position != null) {
      field(sha256, "stream-position");
      field(sha256, position);
    }
    String slot = annotations == null ? null : annotations.get(BuildRecord.ANNOTATION_STREAM_SLOT);
    if (slot != null) {
      field(sha256, "stream-slot");
      field(sha256, slot);
    }
    return HexFormat.of().formatHex(sha256.digest());
  }

  private static MessageDigest newDigest(String domain) {
    try {
      MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
      sha256.update(domain.getBytes(StandardCharsets.UTF_8));
      return sha256;
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required by the Java SE specification", e);
    }
  }

  private static void field(MessageDigest sha256, String value) {
    if (value == null) {
      sha256.update("-\n".getBytes(StandardCharsets.UTF_8));
      return;
    }
    byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
    sha256.update((bytes.length + ":").getBytes(StandardCharsets.UTF_8));
    sha256.update(bytes);
    sha256.update((byte) '\n');
  }
}
