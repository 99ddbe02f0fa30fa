package io.bloomoperator.snapshot;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.UnaryOperator;

/**
 * The language-neutral reader test vectors in {@code sidecar-lib/test-vectors}: what every reader
 * (Java, Go, Python, the lookup sidecar) must load, refuse and answer, written by the Java writer
 * so that the vectors are the wire format as the operator publishes it. Deterministic (fixed keys,
 * fixed clock, fixed signing seeds; Ed25519 signatures are deterministic), so {@link
 * TestVectorsTest} can regenerate them and require the checked-in files to be byte-identical.
 *
 * <p>Expectations are stated from each case's intent (this manifest must be refused as a rollback),
 * never computed by running a reader; probe answers are the writer's own bits, and every key put in
 * is checked to answer present before it is written down.
 */
final class TestVectors {

  static final String NAMESPACE = "vectors";
  static final String FILTER = "products";
  static final String POD = "reader-0";

  /** Small chunks, so that every payload spans several chunks and deltas more than one. */
  static final int CHUNK_BYTES = 256;

  private static final Instant EPOCH = Instant.parse("2026-01-01T00:00:00Z");
  private static final SnapshotLimits LIMITS = new SnapshotLimits(1 << 20, 100);
  private static final ObjectMapper JSON =
      new ObjectMapper()
          .enable(SerializationFeature.INDENT_OUTPUT)
          .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);

  private static final KeyPair TRUSTED = keyPair(1);
  private static final KeyPair STRANGER = keyPair(2);

  private TestVectors() {}

  // ------------------------------------------------------------------ model

  record Probe(String key, boolean present) {}

  /**
   * @param outcome "load" (serve the announced snapshot), "keep" (it is the one served: nothing to
   *     do) or "refuse" (serve what was served before, or nothing)
   * @param reason the {@link LoadFailureReason} of a refusal, else null
   * @param served the manifest served after the step, or null for nothing
   */
  record Expect(String outcome, LoadFailureReason reason, Manifest served, List<Probe> probes) {}

  record Step(String note, List<ConfigMap> configMaps, Expect expect) {}

  record Case(
      String name,
      String description,
      KeyType keyType,
      String podName,
      List<KeyPair> trusted,
      List<Step> steps) {}

  /** One published version: its bits, manifest and every chunk ConfigMap it needs. */
  record Publication(BloomFilterBits bits, Manifest manifest, List<ConfigMap> chunks) {}

  // ------------------------------------------------------------------ files

  /** Every file of the vector directory, by relative path. */
  static SortedMap<String, byte[]> files() {
    SortedMap<String, byte[]> files = new TreeMap<>();
    ArrayNode index = JSON.createArrayNode();
    for (Case c : cases()) {
      index.add(c.name());
      files.put(c.name() + "/case.json", json(caseJson(c)));
    }
    ObjectNode root = JSON.createObjectNode();
    root.put("vectorsVersion", 1);
    root.set("cases", index);
    files.put("index.json", json(root));
    files.put("hashes.json", json(HashVectors.json(JSON)));
    return files;
  }

  private static byte[] json(Object tree) {
    try {
      return (JSON.writeValueAsString(tree) + "\n").getBytes(UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static ObjectNode caseJson(Case c) {
    ObjectNode node = JSON.createObjectNode();
    node.put("name", c.name());
    node.put("description", c.description());
    ObjectNode reader = node.putObject("reader");
    reader.put("namespace", NAMESPACE);
    reader.put("filter", FILTER);
    reader.put("keyType", c.keyType().crdName());
    reader.put("podName", c.podName());
    ArrayNode keys = reader.putArray("trustedKeys");
    c.trusted().forEach(k -> keys.add(Ed25519Keys.toPem(k.getPublic())));
    reader
        .putObject("limits")
        .put("maxTotalBytes", LIMITS.maxTotalBytes())
        .put("maxChunks", LIMITS.maxChunks());
    ArrayNode steps = node.putArray("steps");
    for (Step step : c.steps()) {
      ObjectNode s = steps.addObject();
      s.put("note", step.note());
      ArrayNode cms = s.putArray("configMaps");
      step.configMaps().forEach(cm -> cms.add(JSON.valueToTree(cm)));
      ObjectNode expect = s.putObject("expect");
      expect.put("outcome", step.expect().outcome());
      if (step.expect().reason() != null) {
        expect.put("reason", step.expect().reason().name());
      }
      Manifest served = step.expect().served();
      if (served == null) {
        expect.putNull("served");
      } else {
        expect
            .putObject("served")
            .put("version", served.version())
            .put("format", served.format())
            .put("sha256", served.sha256())
            .put("numBits", served.numBits())
            .put("numHashFunctions", served.numHashFunctions());
      }
      ArrayNode probes = expect.putArray("probes");
      step.expect()
          .probes()
          .forEach(p -> probes.addObject().put("key", p.key()).put("present", p.present()));
    }
    return node;
  }

  // ------------------------------------------------------------------ cases

  static List<Case> cases() {
    List<Case> cases = new ArrayList<>();
    for (FilterFormat format : FilterFormat.values()) {
      String layout = format == FilterFormat.GUAVA ? "guava" : "splitblock";
      for (KeyType type : KeyType.values()) {
        cases.add(
            single(layout + "-" + type.crdName().toLowerCase(java.util.Locale.ROOT), format, type));
      }
      cases.add(chain(layout + "-chain", format));
      cases.add(coldChain(layout + "-chain-from-nothing", format));
    }
    cases.add(hashCount("guava-k1", 1));
    cases.add(hashCount("guava-k40", 40));
    cases.addAll(SignedCases.all());
    cases.addAll(HostileCases.all());
    cases.add(canary("canary-in-share", true));
    cases.add(canary("canary-not-in-share", false));
    cases.add(malformedCanary());
    return cases;
  }

  private static Case single(String name, FilterFormat format, KeyType type) {
    Publication v1 = base(1, bits(format, type, 0, 600));
    return new Case(
        name,
        "one " + format.crdName() + " snapshot of " + type.crdName() + " keys in several chunks",
        type,
        POD,
        List.of(),
        List.of(new Step("v1", published(v1, null), loaded(v1, type, 0, 600))));
  }

  private static Case hashCount(String name, int k) {
    BloomFilterBits.Builder builder = BloomFilterBits.builder(KeyType.STRING, 64L * 200, k);
    putKeys(builder, KeyType.STRING, 0, 300);
    Publication v1 = base(1, builder.build());
    return new Case(
        name,
        "a Guava-layout filter with k = " + k,
        KeyType.STRING,
        POD,
        List.of(),
        List.of(new Step("v1", published(v1, null), loaded(v1, KeyType.STRING, 0, 300))));
  }

  private static Case chain(String name, FilterFormat format) {
    KeyType type = KeyType.STRING;
    Publication v1 = base(1, bits(format, type, 0, 400));
    Publication v2 = delta(v1, 2, bits(format, type, 0, 450));
    Publication v3 = delta(v2, 3, v2.bits()); // an empty delta: no bit changed
    return new Case(
        name,
        "a base, a delta with new keys, then an empty delta; the reader applies each delta to the"
            + " version it holds",
        type,
        POD,
        List.of(),
        List.of(
            new Step("v1 (base)", published(v1, null), loaded(v1, type, 0, 400)),
            new Step("v2 (base + delta 2)", published(v2, null), loaded(v2, type, 0, 450)),
            new Step(
                "v3 (base + deltas 2, 3; delta 3 is empty)",
                published(v3, null),
                loaded(v3, type, 0, 450)),
            new Step(
                "the same manifest announced again",
                published(v3, null),
                new Expect("keep", null, v3.manifest(), probes(v3.bits(), type, 0, 450)))));
  }

  private static Case coldChain(String name, FilterFormat format) {
    KeyType type = KeyType.LONG;
    Publication v1 = base(1, bits(format, type, 0, 400));
    Publication v2 = delta(v1, 2, bits(format, type, 0, 500));
    Publication v3 = delta(v2, 3, bits(format, type, 0, 550));
    return new Case(
        name,
        "a reader that holds nothing loads the base and applies the whole chain",
        type,
        POD,
        List.of(),
        List.of(
            new Step("v3 (base + deltas 2, 3)", published(v3, null), loaded(v3, type, 0, 550))));
  }

  private static Case canary(String name, boolean inShare) {
    KeyType type = KeyType.STRING;
    Publication v1 = base(1, bits(FilterFormat.GUAVA, type, 0, 300));
    Publication v2 = base(2, bits(FilterFormat.GUAVA, type, 0, 330));
    int percent = 50;
    String pod = podFor(percent, inShare);
    List<ConfigMap> maps = new ArrayList<>();
    maps.addAll(v1.chunks());
    maps.addAll(v2.chunks());
    ConfigMap manifest = manifestMap(v1, null);
    maps.add(0, SnapshotConfigMaps.withCanary(manifest, v2.manifest().toJson(), null, percent));
    Publication expected = inShare ? v2 : v1;
    return new Case(
        name,
        "stable v1 with a 50 % canary v2; pod '"
            + pod
            + "' (bucket "
            + CanaryShare.bucket(pod)
            + ") is "
            + (inShare ? "" : "not ")
            + "in the share",
        type,
        pod,
        List.of(),
        List.of(
            new Step(
                "stable v1, canary v2 at 50 %",
                maps, loaded(expected, type, 0, inShare ? 330 : 300))));
  }

  /** A canary whose share is not a number counts as no canary: the stable manifest is followed. */
  private static Case malformedCanary() {
    KeyType type = KeyType.STRING;
    Publication v1 = base(1, bits(FilterFormat.GUAVA, type, 0, 300));
    Publication v2 = base(2, bits(FilterFormat.GUAVA, type, 0, 330));
    String pod = podFor(50, true);
    ConfigMap manifest =
        SnapshotConfigMaps.withCanary(manifestMap(v1, null), v2.manifest().toJson(), null, 50);
    Map<String, String> data = new LinkedHashMap<>(manifest.getData());
    data.put(SnapshotNames.CANARY_PERCENT_DATA_KEY, "half");
    List<ConfigMap> maps = new ArrayList<>();
    maps.add(new ConfigMapBuilder(manifest).withData(data).build());
    maps.addAll(v1.chunks());
    maps.addAll(v2.chunks());
    return new Case(
        "canary-malformed",
        "stable v1 with a canary v2 whose share is 'half': the canary is ignored (pod '"
            + pod
            + "' would be in a 50 % share)",
        type,
        pod,
        List.of(),
        List.of(new Step("stable v1, malformed canary", maps, loaded(v1, type, 0, 300))));
  }

  /** The first pod name "reader-N" that is (or is not) in a share of {@code percent}. */
  private static String podFor(int percent, boolean inShare) {
    for (int i = 0; ; i++) {
      String pod = "reader-" + i;
      if (CanaryShare.contains(pod, percent) == inShare) {
        return pod;
      }
    }
  }

  // ------------------------------------------------------------------ building blocks

  static String key(KeyType type, int i) {
    if (type == KeyType.LONG) {
      long[] special = {0, -1, 1, Long.MIN_VALUE, Long.MAX_VALUE, Integer.MIN_VALUE, 1L << 32};
      long v = i < special.length ? special[i] : 1_000_003L * i - 500_000_000L;
      return Long.toString(v);
    }
    String[] special = GuavaOracle.specialStrings();
    // Lone surrogates have no UTF-8 form: JSON and other languages cannot carry them faithfully.
    if (i < special.length && !hasLoneSurrogate(special[i])) {
      return special[i];
    }
    return i % 7 == 0 ? "produit-\u00e9-" + i : "product-" + i;
  }

  private static boolean hasLoneSurrogate(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c)) {
        if (i + 1 == s.length() || !Character.isLowSurrogate(s.charAt(i + 1))) {
          return true;
        }
        i++;
      } else if (Character.isLowSurrogate(c)) {
        return true;
      }
    }
    return false;
  }

  static BloomFilterBits bits(FilterFormat format, KeyType type, int from, int to) {
    BloomFilterBits.Builder builder =
        format == FilterFormat.GUAVA
            ? BloomFilterBits.builder(type, BloomFilterSizing.forKeys(600, 0.01))
            : BloomFilterBits.builder(type, SplitBlockSizing.forKeys(600, 0.01));
    putKeys(builder, type, from, to);
    return builder.build();
  }

  private static void putKeys(BloomFilterBits.Builder builder, KeyType type, int from, int to) {
    for (int i = from; i < to; i++) {
      String key = key(type, i);
      if (type == KeyType.LONG) {
        builder.putLong(Long.parseLong(key));
      } else {
        builder.putString(key);
      }
    }
  }

  static Instant createdAt(long version) {
    return EPOCH.plusSeconds(60 * version);
  }

  static Publication base(long version, BloomFilterBits bits) {
    return base(FILTER, version, bits);
  }

  /** As {@link #base(long, BloomFilterBits)}, published under another filter's name. */
  static Publication base(String filter, long version, BloomFilterBits bits) {
    List<ConfigMap> chunks = new ArrayList<>();
    SnapshotEncoder.Result encoded;
    try {
      encoded =
          SnapshotEncoder.encode(
              bits,
              CHUNK_BYTES,
              (index, data, length, sha) ->
                  chunks.add(
                      SnapshotConfigMaps.chunk(NAMESPACE, filter, version, index, data, length)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Manifest manifest =
        Manifest.of(filter, version, bits, keyCount(bits), encoded, createdAt(version));
    return new Publication(bits, manifest, chunks);
  }

  /**
   * A key count for the manifest (set bits / k): it only feeds the manifest's informational fields,
   * which no reader checks against the bits.
   */
  private static long keyCount(BloomFilterBits bits) {
    return Math.max(1, bits.bitCount() / Math.max(1, bits.numHashFunctions()));
  }

  static Publication delta(Publication previous, long version, BloomFilterBits bits) {
    List<ConfigMap> chunks = new ArrayList<>(previous.chunks());
    SnapshotDelta.Result delta;
    try {
      delta =
          SnapshotDelta.encode(
              previous.bits(),
              bits,
              CHUNK_BYTES,
              (index, data, length, sha) ->
                  chunks.add(
                      SnapshotConfigMaps.deltaChunk(
                          NAMESPACE, FILTER, version, index, data, length)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Manifest manifest =
        Manifest.withDelta(
            previous.manifest(),
            version,
            bits,
            keyCount(bits),
            SnapshotEncoder.sha256(bits),
            delta,
            createdAt(version));
    return new Publication(bits, manifest, chunks);
  }

  /** The manifest ConfigMap of {@code publication}, signed when {@code signer} is given. */
  static ConfigMap manifestMap(Publication publication, KeyPair signer) {
    return SnapshotConfigMaps.manifest(
        NAMESPACE,
        publication.manifest(),
        signer == null ? null : new ManifestSigner(signer.getPrivate()),
        null);
  }

  /** The manifest ConfigMap followed by every chunk of {@code publication}. */
  static List<ConfigMap> published(Publication publication, KeyPair signer) {
    List<ConfigMap> maps = new ArrayList<>();
    maps.add(manifestMap(publication, signer));
    maps.addAll(publication.chunks());
    return maps;
  }

  /** A manifest ConfigMap whose manifest text was changed by {@code edit} (and not re-signed). */
  static ConfigMap editedManifest(ConfigMap manifest, UnaryOperator<String> edit) {
    Map<String, String> data = new LinkedHashMap<>(manifest.getData());
    String before = data.get(SnapshotNames.MANIFEST_DATA_KEY);
    String after = edit.apply(before);
    if (after.equals(before)) {
      throw new IllegalStateException("the edit changed nothing");
    }
    data.put(SnapshotNames.MANIFEST_DATA_KEY, after);
    return new ConfigMapBuilder(manifest).withData(data).build();
  }

  /** Chunk ConfigMap {@code chunk} with one byte of its data flipped (same length). */
  static ConfigMap tampered(ConfigMap chunk) {
    byte[] bytes =
        Base64.getDecoder().decode(chunk.getBinaryData().get(SnapshotNames.CHUNK_DATA_KEY));
    bytes[bytes.length / 2] ^= 0x10;
    return new ConfigMapBuilder(chunk)
        .withBinaryData(
            Map.of(SnapshotNames.CHUNK_DATA_KEY, Base64.getEncoder().encodeToString(bytes)))
        .build();
  }

  static Expect loaded(Publication publication, KeyType type, int from, int to) {
    return new Expect(
        "load", null, publication.manifest(), probes(publication.bits(), type, from, to));
  }

  static Expect refused(LoadFailureReason reason, Publication stillServed, KeyType type, int to) {
    return new Expect(
        "refuse",
        reason,
        stillServed == null ? null : stillServed.manifest(),
        stillServed == null ? List.of() : probes(stillServed.bits(), type, 0, to));
  }

  /**
   * Up to 40 keys put in (each checked present: a vector must never encode a false negative), and
   * 40 keys that were not, with whatever the bits answer (false positives included).
   */
  static List<Probe> probes(BloomFilterBits bits, KeyType type, int from, int to) {
    List<Probe> probes = new ArrayList<>();
    int step = Math.max(1, (to - from) / 40);
    for (int i = from; i < to; i += step) {
      String key = key(type, i);
      if (!answer(bits, type, key)) {
        throw new IllegalStateException("false negative for key #" + i + " in a vector");
      }
      probes.add(new Probe(key, true));
    }
    for (int i = 0; i < 40; i++) {
      String key = key(type, 100_000 + i);
      probes.add(new Probe(key, answer(bits, type, key)));
    }
    return probes;
  }

  private static boolean answer(BloomFilterBits bits, KeyType type, String key) {
    return type == KeyType.LONG
        ? bits.mightContainLong(Long.parseLong(key))
        : bits.mightContainString(key);
  }

  static KeyPair trusted() {
    return TRUSTED;
  }

  static KeyPair stranger() {
    return STRANGER;
  }

  /** A fixed Ed25519 key pair: the generator draws its 32-byte seed from here. */
  private static KeyPair keyPair(int seedByte) {
    byte[] seed = new byte[32];
    java.util.Arrays.fill(seed, (byte) seedByte);
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance(Ed25519Keys.ALGORITHM);
      generator.initialize(
          java.security.spec.NamedParameterSpec.ED25519,
          new SecureRandom() {
            private static final long serialVersionUID = 1L;

            @Override
            public void nextBytes(byte[] bytes) {
              System.arraycopy(seed, 0, bytes, 0, bytes.length);
            }
          });
      return generator.generateKeyPair();
    } catch (NoSuchAlgorithmException | java.security.InvalidAlgorithmParameterException e) {
      throw new IllegalStateException(e);
    }
  }
}
