package io.bloomoperator.snapshot;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The snapshot's Kubernetes objects, as docs/snapshot-protocol.md lays them out: a chunk of payload
 * bytes to and from its ConfigMap, a manifest (with its optional signature and the writer's
 * bookkeeping annotations) to and from the manifest ConfigMap. Every writer (the operator, its CLI,
 * test publishers) and every reader (sidecar-lib, the CLI) goes through here, so the layout is
 * written down once; names and labels come from {@link SnapshotNames}.
 *
 * <p>Objects are returned without ownerReferences or resourceVersion: those belong to the writer
 * (the operator adds its BloomFilter as controller, the CLI writes files without one).
 */
public final class SnapshotConfigMaps {

  /**
   * Annotation: the versions (comma-separated) whose chunks the previous manifest named and the
   * current one does not, kept for the grace period: readers may still be fetching them.
   */
  public static final String ANNOTATION_PREVIOUS_VERSIONS = "bloomoperator.io/previous-versions";

  /** Annotation of operators before delta chains: the one version the current one replaced. */
  public static final String ANNOTATION_PREVIOUS_VERSION = "bloomoperator.io/previous-version";

  /** Annotation of operators before delta chains: the previous version's chunk count. */
  public static final String ANNOTATION_PREVIOUS_CHUNKS = "bloomoperator.io/previous-chunks";

  /** Annotation: when the current version replaced the previous one (RFC 3339). */
  public static final String ANNOTATION_SUPERSEDED_AT = "bloomoperator.io/superseded-at";

  /** Annotation: change token of the source content the published version was built from. */
  public static final String ANNOTATION_SOURCE_TOKEN = "bloomoperator.io/source-token";

  /** Annotation: the BloomFilter generation (spec) the published version was built for. */
  public static final String ANNOTATION_SPEC_GENERATION = "bloomoperator.io/spec-generation";

  /** Annotation: when the last build that produced or confirmed this version finished. */
  public static final String ANNOTATION_BUILT_AT = "bloomoperator.io/built-at";

  /**
   * Annotation: the change-stream position the published version is consistent with (every event
   * before it is in the filter), on filters with {@code spec.changes}; the operator's bookkeeping,
   * readers ignore it.
   */
  public static final String ANNOTATION_STREAM_POSITION = "bloomoperator.io/stream-position";

  private SnapshotConfigMaps() {}

  // ---------------------------------------------------------------- chunks

  /**
   * Chunk {@code index} of {@code version}: immutable, labelled, the first {@code length} bytes of
   * {@code data} in {@code binaryData.chunk} (binaryData, not data: the API server's object limit
   * counts decoded bytes).
   */
  public static ConfigMap chunk(
      String namespace, String filterName, long version, int index, byte[] data, int length) {
    return chunk(
        namespace,
        SnapshotNames.chunkName(filterName, version, index),
        SnapshotNames.chunkLabels(filterName, version),
        data,
        length);
  }

  /**
   * As {@link #chunk}, for chunk {@code index} of the delta that produces {@code version}: named
   * {@link SnapshotNames#deltaChunkName} and labelled {@link SnapshotNames#deltaChunkLabels}.
   */
  public static ConfigMap deltaChunk(
      String namespace, String filterName, long version, int index, byte[] data, int length) {
    return chunk(
        namespace,
        SnapshotNames.deltaChunkName(filterName, version, index),
        SnapshotNames.deltaChunkLabels(filterName, version),
        data,
        length);
  }

  private static ConfigMap chunk(
      String namespace, String name, Map<String, String> labels, byte[] data, int length) {
    byte[] bytes = length == data.length ? data : Arrays.copyOf(data, length);
    return new ConfigMapBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(namespace)
        .withLabels(labels)
        .endMetadata()
        .withImmutable(true)
        .withBinaryData(
            Map.of(SnapshotNames.CHUNK_DATA_KEY, Base64.getEncoder().encodeToString(bytes)))
        .build();
  }

  /**
   * The bytes of a chunk ConfigMap the manifest announces as {@code expectedBytes} long. The Base64
   * length is checked before decoding, so a replaced chunk cannot make a reader allocate more than
   * the manifest announced (which the reader's limits already bounded); size and digest are still
   * the decoder's to check.
   *
   * @param where names the chunk in messages, e.g. {@code "chunk ConfigMap ns/name"}
   * @throws IOException if the binaryData key is missing, has another length or is not Base64
   */
  public static byte[] chunkBytes(ConfigMap chunk, int expectedBytes, String where)
      throws IOException {
    Map<String, String> binaryData = chunk.getBinaryData();
    String base64 = binaryData == null ? null : binaryData.get(SnapshotNames.CHUNK_DATA_KEY);
    if (base64 == null) {
      throw new IOException(
          where + " has no binaryData key '" + SnapshotNames.CHUNK_DATA_KEY + "'");
    }
    long expectedLength = 4L * ((expectedBytes + 2L) / 3);
    if (base64.length() != expectedLength) {
      throw new IOException(
          where
              + " holds "
              + base64.length()
              + " base64 characters, the "
              + "manifest announces "
              + expectedBytes
              + " bytes ("
              + expectedLength
              + " characters)");
    }
    try {
      return Base64.getDecoder().decode(base64);
    } catch (IllegalArgumentException e) {
      throw new IOException(where + " is not valid base64", e);
    }
  }

  /**
   * Reads chunks of {@code namespace} from the API server for {@link
   * SnapshotDecoder#decode(Manifest, SnapshotDecoder.ChunkSource)}: one GET by name per chunk
   * (never a list: each holds up to 1 MiB), a missing chunk as null (the decoder reports it), the
   * bytes through {@link #chunkBytes}.
   */
  public static SnapshotDecoder.ChunkSource chunkSource(KubernetesClient client, String namespace) {
    return ConfigMapChunkStore.reader(client, namespace);
  }

  // ---------------------------------------------------------------- manifest

  /**
   * The manifest ConfigMap of {@code manifest}: labelled, mutable (the next version replaces its
   * content), with {@value SnapshotNames#MANIFEST_DATA_KEY} and, when {@code signer} is not null,
   * {@value SnapshotNames#SIGNATURE_DATA_KEY} over exactly that text and {@code namespace}.
   *
   * @param annotations the bookkeeping annotations (see {@link #putBuildRecord}, {@link
   *     #putSuperseded}); null or empty for none
   */
  public static ConfigMap manifest(
      String namespace, Manifest manifest, ManifestSigner signer, Map<String, String> annotations) {
    String json = manifest.toJson();
    return manifest(
        namespace,
        manifest.filterName(),
        json,
        signer == null ? null : signer.sign(namespace, json).toData(),
        annotations);
  }

  /**
   * The manifest ConfigMap of {@code filterName} holding exactly {@code json} and {@code
   * signature}: for whoever must store a given text (a re-signed or a forged manifest).
   *
   * @param signature the {@value SnapshotNames#SIGNATURE_DATA_KEY} value, or null for none
   * @param annotations the bookkeeping annotations; null or empty for none
   */
  public static ConfigMap manifest(
      String namespace,
      String filterName,
      String json,
      String signature,
      Map<String, String> annotations) {
    Map<String, String> data =
        signature == null
            ? Map.of(SnapshotNames.MANIFEST_DATA_KEY, json)
            : Map.of(
                SnapshotNames.MANIFEST_DATA_KEY, json, SnapshotNames.SIGNATURE_DATA_KEY, signature);
    return new ConfigMapBuilder()
        .withNewMetadata()
        .withName(SnapshotNames.manifestName(filterName))
        .withNamespace(namespace)
        .withLabels(SnapshotNames.manifestLabels(filterName))
        .withAnnotations(annotations == null || annotations.isEmpty() ? null : annotations)
        .endMetadata()
        .withData(data)
        .build();
  }

  /** The manifest JSON text of a manifest ConfigMap, or null when it has none (not a manifest). */
  public static String manifestJson(ConfigMap configMap) {
    Map<String, String> data = configMap.getData();
    return data == null ? null : data.get(SnapshotNames.MANIFEST_DATA_KEY);
  }

  /** The signature data of a manifest ConfigMap, or null when unsigned. */
  public static String signatureData(ConfigMap configMap) {
    Map<String, String> data = configMap.getData();
    return data == null ? null : data.get(SnapshotNames.SIGNATURE_DATA_KEY);
  }

  /**
   * Parses a manifest ConfigMap. Nothing is checked against a reader's limits or keys here.
   *
   * @throws SnapshotVerificationException if {@value SnapshotNames#MANIFEST_DATA_KEY} is missing or
   *     is not a valid manifest
   */
  public static AnnouncedManifest readManifest(ConfigMap configMap)
      throws SnapshotVerificationException {
    String json = manifestJson(configMap);
    if (json == null) {
      throw new SnapshotVerificationException(
          "ConfigMap "
              + configMap.getMetadata().getNamespace()
              + "/"
              + configMap.getMetadata().getName()
              + " has no data key '"
              + SnapshotNames.MANIFEST_DATA_KEY
              + "'");
    }
    return new AnnouncedManifest(Manifest.fromJson(json), json, signatureData(configMap));
  }

  /**
   * {@code configMap} (a manifest ConfigMap) with a canary beside its stable manifest: {@code json}
   * and {@code signature} under {@value SnapshotNames#CANARY_MANIFEST_DATA_KEY} and {@value
   * SnapshotNames#CANARY_SIGNATURE_DATA_KEY}, the share under {@value
   * SnapshotNames#CANARY_PERCENT_DATA_KEY}; a null {@code json} removes a canary. The other keys
   * are kept as they are.
   *
   * @param signature the canary's signature data, or null for none
   * @param percent the share, 1..100 (ignored when {@code json} is null)
   */
  public static ConfigMap withCanary(
      ConfigMap configMap, String json, String signature, int percent) {
    Map<String, String> data =
        new LinkedHashMap<>(configMap.getData() == null ? Map.of() : configMap.getData());
    data.remove(SnapshotNames.CANARY_MANIFEST_DATA_KEY);
    data.remove(SnapshotNames.CANARY_SIGNATURE_DATA_KEY);
    data.remove(SnapshotNames.CANARY_PERCENT_DATA_KEY);
    if (json != null) {
      if (percent < 1 || percent > CanaryShare.BUCKETS) {
        throw new IllegalArgumentException("canary share must be 1..100 %, was " + percent);
      }
      data.put(SnapshotNames.CANARY_MANIFEST_DATA_KEY, json);
      data.put(SnapshotNames.CANARY_PERCENT_DATA_KEY, Integer.toString(percent));
      if (signature != null) {
        data.put(SnapshotNames.CANARY_SIGNATURE_DATA_KEY, signature);
      }
    }
    return new ConfigMapBuilder(configMap).withData(data).build();
  }

  /**
   * The canary announced in a manifest ConfigMap, or null when there is none. Nothing is checked
   * against a reader's limits or keys here: the canary manifest goes through the reader's
   * acceptance rule exactly as the stable one.
   *
   * @throws SnapshotVerificationException if a canary is announced with a share that is not 1..100
   *     in plain digits, or its manifest is not a valid manifest
   */
  public static AnnouncedCanary readCanary(ConfigMap configMap)
      throws SnapshotVerificationException {
    Map<String, String> data = configMap.getData();
    String json = data == null ? null : data.get(SnapshotNames.CANARY_MANIFEST_DATA_KEY);
    if (json == null) {
      return null;
    }
    int percent = canaryPercent(data.get(SnapshotNames.CANARY_PERCENT_DATA_KEY));
    if (percent < 1) {
      // The value is not echoed: the ConfigMap's contents are not ours to repeat in logs.
      throw new SnapshotVerificationException(
          "canary share '"
              + SnapshotNames.CANARY_PERCENT_DATA_KEY
              + "' is missing or not a whole percent 1..100");
    }
    return new AnnouncedCanary(
        new AnnouncedManifest(
            Manifest.fromJson(json), json, data.get(SnapshotNames.CANARY_SIGNATURE_DATA_KEY)),
        percent);
  }

  /** The share 1..100, or 0 when {@code text} is not one (bounded before parsing). */
  private static int canaryPercent(String text) {
    if (text == null || text.isEmpty() || text.length() > 3) {
      return 0;
    }
    for (int i = 0; i < text.length(); i++) {
      if (text.charAt(i) < '0' || text.charAt(i) > '9') {
        return 0;
      }
    }
    int percent = Integer.parseInt(text);
    return percent >= 1 && percent <= CanaryShare.BUCKETS ? percent : 0;
  }

  /**
   * Records in {@code annotations} what a build was made from; a null {@code sourceToken} removes a
   * recorded one.
   */
  public static void putBuildRecord(
      Map<String, String> annotations, String sourceToken, long specGeneration, Instant builtAt) {
    if (sourceToken != null) {
      annotations.put(ANNOTATION_SOURCE_TOKEN, sourceToken);
    } else {
      annotations.remove(ANNOTATION_SOURCE_TOKEN);
    }
    annotations.put(ANNOTATION_SPEC_GENERATION, Long.toString(specGeneration));
    annotations.put(ANNOTATION_BUILT_AT, builtAt.toString());
  }

  /**
   * As {@link #putBuildRecord(Map, String, long, Instant)}, with the change-stream position the
   * version is consistent with ({@link #ANNOTATION_STREAM_POSITION}); null removes it.
   */
  public static void putBuildRecord(
      Map<String, String> annotations,
      String sourceToken,
      long specGeneration,
      Instant builtAt,
      String streamPosition) {
    putBuildRecord(annotations, sourceToken, specGeneration, builtAt);
    if (streamPosition != null) {
      annotations.put(ANNOTATION_STREAM_POSITION, streamPosition);
    } else {
      annotations.remove(ANNOTATION_STREAM_POSITION);
    }
  }

  /**
   * Records in {@code annotations} that the chunks of {@code versions} stopped being named by the
   * manifest at {@code at}, so they can be deleted once the grace period is over.
   */
  public static void putSuperseded(
      Map<String, String> annotations, List<Long> versions, Instant at) {
    removeSuperseded(annotations);
    if (versions.isEmpty()) {
      return;
    }
    StringBuilder list = new StringBuilder();
    for (long version : versions) {
      list.append(list.length() == 0 ? "" : ",").append(version);
    }
    annotations.put(ANNOTATION_PREVIOUS_VERSIONS, list.toString());
    annotations.put(ANNOTATION_SUPERSEDED_AT, at.toString());
  }

  /** Removes what {@link #putSuperseded} recorded: the previous version is gone. */
  public static void removeSuperseded(Map<String, String> annotations) {
    annotations.remove(ANNOTATION_PREVIOUS_VERSIONS);
    annotations.remove(ANNOTATION_PREVIOUS_VERSION);
    annotations.remove(ANNOTATION_PREVIOUS_CHUNKS);
    annotations.remove(ANNOTATION_SUPERSEDED_AT);
  }
}
