package io.bloomoperator.snapshot;

import static io.bloomoperator.snapshot.TestVectors.FILTER;
import static io.bloomoperator.snapshot.TestVectors.NAMESPACE;
import static io.bloomoperator.snapshot.TestVectors.POD;
import static io.bloomoperator.snapshot.TestVectors.base;
import static io.bloomoperator.snapshot.TestVectors.bits;
import static io.bloomoperator.snapshot.TestVectors.loaded;
import static io.bloomoperator.snapshot.TestVectors.published;
import static io.bloomoperator.snapshot.TestVectors.refused;

import io.bloomoperator.snapshot.TestVectors.Case;
import io.bloomoperator.snapshot.TestVectors.Publication;
import io.bloomoperator.snapshot.TestVectors.Step;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Vector cases a reader must refuse: manifests that claim more than the reader's limits or name
 * chunks that are not theirs (refused before anything is fetched: the chunks they name are not even
 * there), and chunks that fail verification (refused after fetching, while the version served
 * before keeps being served whole).
 */
final class HostileCases {

  private static final KeyType TYPE = KeyType.STRING;

  private HostileCases() {}

  static List<Case> all() {
    Publication v1 = base(1, bits(FilterFormat.GUAVA, TYPE, 0, 300));
    Publication v2 = base(2, bits(FilterFormat.GUAVA, TYPE, 0, 350));
    List<Case> cases = new ArrayList<>();
    cases.add(
        one(
            "hostile-too-large",
            "a manifest announcing a 3 MiB payload in three 1 MiB chunks, over the reader's 1 MiB"
                + " limit; its chunks do not exist",
            List.of(claiming(3, 3L * SnapshotLimits.MAX_CHUNK_BYTES - 2)),
            refused(LoadFailureReason.TOO_LARGE, null, TYPE, 0)));
    cases.add(
        one(
            "hostile-too-many-chunks",
            "a manifest announcing 126 one-byte chunks, over the reader's 100; its chunks do"
                + " not exist",
            List.of(claiming(126, 126)),
            refused(LoadFailureReason.TOO_LARGE, null, TYPE, 0)));
    Publication other = base("other", 1, v1.bits());
    List<ConfigMap> foreign = new ArrayList<>(other.chunks());
    foreign.add(
        0,
        SnapshotConfigMaps.manifest(
            NAMESPACE, FILTER, renamed(other.manifest().toJson()), null, null));
    cases.add(
        one(
            "hostile-foreign-chunks",
            "this filter's manifest naming the chunks of filter 'other' (present, with valid bytes)",
            foreign,
            refused(LoadFailureReason.FOREIGN_CHUNK, null, TYPE, 0)));
    List<ConfigMap> wrongFilter = new ArrayList<>(other.chunks());
    wrongFilter.add(
        0, SnapshotConfigMaps.manifest(NAMESPACE, FILTER, other.manifest().toJson(), null, null));
    cases.add(
        one(
            "hostile-wrong-filter",
            "the manifest of filter 'other' stored in this filter's manifest ConfigMap",
            wrongFilter,
            refused(LoadFailureReason.WRONG_FILTER, null, TYPE, 0)));
    cases.add(
        one(
            "hostile-not-a-manifest",
            "manifest.json that is not a manifest",
            List.of(
                SnapshotConfigMaps.manifest(NAMESPACE, FILTER, "{\"version\": \"1\"}", null, null)),
            refused(LoadFailureReason.VERIFICATION, null, TYPE, 0)));
    cases.add(
        new Case(
            "hostile-key-type",
            "a reader of Long keys refuses a snapshot of String keys",
            KeyType.LONG,
            POD,
            List.of(),
            List.of(
                new Step(
                    "String v1",
                    published(v1, null),
                    refused(LoadFailureReason.VERIFICATION, null, KeyType.LONG, 0)))));
    List<ConfigMap> tampered = new ArrayList<>(published(v2, null));
    tampered.set(2, TestVectors.tampered(tampered.get(2)));
    cases.add(
        afterV1(
            "tampered-chunk",
            "v2's second chunk has one byte changed (its size unchanged): v1 stays served, whole",
            v1,
            new Step(
                "v2, one chunk tampered",
                tampered,
                refused(LoadFailureReason.VERIFICATION, v1, TYPE, 300))));
    List<ConfigMap> missing = new ArrayList<>(published(v2, null));
    missing.remove(missing.size() - 1);
    cases.add(
        afterV1(
            "missing-chunk",
            "v2's last chunk ConfigMap does not exist: v1 stays served",
            v1,
            new Step(
                "v2 without its last chunk",
                missing,
                refused(LoadFailureReason.VERIFICATION, v1, TYPE, 300))));
    List<ConfigMap> padded = new ArrayList<>(published(v1, null));
    ConfigMap chunk = padded.get(1);
    byte[] bytes =
        java.util.Base64.getDecoder()
            .decode(chunk.getBinaryData().get(SnapshotNames.CHUNK_DATA_KEY));
    padded.set(
        1,
        new ConfigMapBuilder(chunk)
            .withBinaryData(
                Map.of(
                    SnapshotNames.CHUNK_DATA_KEY,
                    java.util.Base64.getEncoder()
                        .encodeToString(java.util.Arrays.copyOf(bytes, bytes.length + 3))))
            .build());
    cases.add(
        one(
            "chunk-longer-than-announced",
            "a chunk's base64 holds 3 bytes more than the manifest announces: refused before"
                + " decoding it",
            padded,
            refused(LoadFailureReason.CHUNK, null, TYPE, 0)));
    return cases;
  }

  /** {@code json} claiming to be the manifest of this filter instead of 'other'. */
  private static String renamed(String json) {
    String renamed = json.replaceFirst("(\"filterName\" *: *)\"other\"", "$1\"" + FILTER + "\"");
    if (renamed.equals(json)) {
      throw new IllegalStateException("no filterName to rename");
    }
    return renamed;
  }

  /** A case whose reader serves v1 (300 keys) before {@code step}. */
  private static Case afterV1(String name, String description, Publication v1, Step step) {
    return new Case(
        name,
        description,
        TYPE,
        POD,
        List.of(),
        List.of(new Step("v1", published(v1, null), loaded(v1, TYPE, 0, 300)), step));
  }

  private static Case one(
      String name, String description, List<ConfigMap> maps, TestVectors.Expect expect) {
    return new Case(name, description, TYPE, POD, List.of(), List.of(new Step("v1", maps, expect)));
  }

  /**
   * A well-formed Guava manifest of a {@code total}-byte payload in {@code chunks} chunks (whose
   * ConfigMaps do not exist): only a reader that checks its limits first refuses it unfetched.
   */
  private static ConfigMap claiming(int chunks, long total) {
    int chunkBytes = (int) ((total + chunks - 1) / chunks);
    long numLongs = (total - SnapshotEncoder.HEADER_BYTES) / Long.BYTES;
    if (SnapshotEncoder.HEADER_BYTES + numLongs * Long.BYTES != total) {
      throw new IllegalArgumentException("not a Guava payload size: " + total);
    }
    List<Manifest.ChunkRef> refs = new ArrayList<>();
    for (int i = 0; i < chunks; i++) {
      int bytes = (int) Math.min(chunkBytes, total - (long) i * chunkBytes);
      refs.add(new Manifest.ChunkRef(SnapshotNames.chunkName(FILTER, 1, i), bytes, "0".repeat(64)));
    }
    Manifest manifest =
        new Manifest(
            Manifest.FORMAT,
            1,
            FILTER,
            TYPE,
            numLongs * Long.SIZE,
            7,
            1000,
            0.01,
            total,
            "0".repeat(64),
            "2026-01-01T00:01:00Z",
            refs);
    return SnapshotConfigMaps.manifest(NAMESPACE, manifest, null, null);
  }
}
