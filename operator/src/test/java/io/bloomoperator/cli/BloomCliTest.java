package io.bloomoperator.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SplitBlockBits;
import io.bloomoperator.snapshot.SplitBlockSizing;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BloomCliTest {

  private static final int KEYS = 120_000;
  private static final String FILTER = "product-ids";

  @TempDir Path tmp;

  private static List<String> keys(String prefix, int count) {
    return IntStream.range(0, count).mapToObj(i -> prefix + "-" + i).toList();
  }

  /** A gzip key file with a comment and blank lines sprinkled in. */
  private Path gzipKeyFile(List<String> keys) throws IOException {
    Path file = tmp.resolve("keys.txt.gz");
    try (Writer out =
        new java.io.OutputStreamWriter(
            new GZIPOutputStream(Files.newOutputStream(file)), StandardCharsets.UTF_8)) {
      out.write("# product ids, exported nightly\n\n");
      for (String key : keys) {
        out.write(key);
        out.write('\n');
      }
    }
    return file;
  }

  private Path build(List<String> keys, int chunkSize, String... extra) throws IOException {
    Path out = tmp.resolve("out");
    List<String> args =
        new ArrayList<>(
            List.of(
                "build",
                "--name",
                FILTER,
                "--input",
                gzipKeyFile(keys).toString(),
                "--fpp",
                "0.01",
                "--chunk-size",
                Integer.toString(chunkSize),
                "--output",
                out.toString()));
    args.addAll(List.of(extra));
    Cli.Run run = Cli.run(args.toArray(String[]::new));
    assertThat(run.exit()).as("%s", run).isZero();
    return out;
  }

  private static ConfigMap configMap(Path file) throws IOException {
    try (var in = Files.newInputStream(file)) {
      return Serialization.unmarshal(in, ConfigMap.class);
    }
  }

  private static Manifest manifest(Path dir) throws Exception {
    ConfigMap cm = configMap(dir.resolve(SnapshotNames.manifestName(FILTER) + ".yaml"));
    return SnapshotConfigMaps.readManifest(cm).manifest();
  }

  private static byte[] chunkBytes(Path dir, Manifest.ChunkRef ref) throws IOException {
    ConfigMap cm = configMap(dir.resolve(ref.name() + ".yaml"));
    return SnapshotConfigMaps.chunkBytes(cm, ref.bytes(), ref.name());
  }

  private static byte[] payload(Path dir, Manifest manifest) throws IOException {
    ByteArrayOutputStream payload = new ByteArrayOutputStream();
    for (Manifest.ChunkRef ref : manifest.chunks()) {
      payload.write(chunkBytes(dir, ref));
    }
    return payload.toByteArray();
  }

  @Test
  void buildWritesChunkConfigMapsThatGuavaReadsBack() throws Exception {
    List<String> keys = keys("sku", KEYS);
    Cli.Run run;
    Path out = tmp.resolve("out");
    run =
        Cli.run(
            "build",
            "--name",
            FILTER,
            "--namespace",
            "shop",
            "--input",
            gzipKeyFile(keys).toString(),
            "--fpp",
            "0.01",
            "--chunk-size",
            "8192",
            "--output",
            out.toString());
    assertThat(run.exit()).as("%s", run).isZero();

    Manifest manifest = manifest(out);
    // Sized as the operator sizes: for the actual key count (the comment and blank line skipped).
    BloomFilterSizing sizing = BloomFilterSizing.forKeys(KEYS, 0.01);
    assertThat(manifest.keyCount()).isEqualTo(KEYS);
    assertThat(manifest.numBits()).isEqualTo(sizing.numBits());
    assertThat(manifest.numHashFunctions()).isEqualTo(sizing.numHashFunctions());
    assertThat(manifest.version()).isEqualTo(1);
    assertThat(manifest.filterName()).isEqualTo(FILTER);
    assertThat(manifest.keyType()).isEqualTo(KeyType.STRING);
    int expectedChunks = (int) ((manifest.totalBytes() + 8191) / 8192);
    assertThat(expectedChunks).isGreaterThan(5);
    assertThat(manifest.chunks()).hasSize(expectedChunks);

    // One file per chunk plus the manifest, nothing else (no temp files left behind).
    try (Stream<Path> files = Files.list(out)) {
      assertThat(files.map(f -> f.getFileName().toString()).sorted())
          .hasSize(expectedChunks + 1)
          .allMatch(n -> n.endsWith(".yaml") && !n.startsWith("."));
    }
    for (int i = 0; i < expectedChunks; i++) {
      String name = SnapshotNames.chunkName(FILTER, 1, i);
      assertThat(manifest.chunks().get(i).name()).isEqualTo(name);
      ConfigMap chunk = configMap(out.resolve(name + ".yaml"));
      assertThat(chunk.getMetadata().getName()).isEqualTo(name);
      assertThat(chunk.getMetadata().getNamespace()).isEqualTo("shop");
      assertThat(chunk.getMetadata().getLabels()).isEqualTo(SnapshotNames.chunkLabels(FILTER, 1));
      assertThat(chunk.getMetadata().getOwnerReferences()).isNullOrEmpty();
      assertThat(chunk.getImmutable()).isTrue();
      assertThat(chunk.getData()).isNullOrEmpty();
      int size = chunkBytes(out, manifest.chunks().get(i)).length;
      if (i < expectedChunks - 1) {
        assertThat(size).isEqualTo(8192);
      } else {
        assertThat(size).isBetween(1, 8192);
      }
      assertThat(size).isEqualTo(manifest.chunks().get(i).bytes());
    }
    ConfigMap manifestMap = configMap(out.resolve(SnapshotNames.manifestName(FILTER) + ".yaml"));
    assertThat(manifestMap.getMetadata().getLabels())
        .isEqualTo(SnapshotNames.manifestLabels(FILTER));
    assertThat(manifestMap.getMetadata().getOwnerReferences()).isNullOrEmpty();
    assertThat(manifestMap.getImmutable()).isNotEqualTo(Boolean.TRUE);

    byte[] payload = payload(out, manifest);
    assertThat(payload).hasSize((int) manifest.totalBytes());
    BloomFilter<CharSequence> guava =
        BloomFilter.readFrom(
            new ByteArrayInputStream(payload), Funnels.stringFunnel(StandardCharsets.UTF_8));
    assertThat(keys).allMatch(guava::mightContain);

    assertThat(run.out())
        .contains(
            "'" + FILTER + "' v1",
            KEYS + " keys",
            "numBits " + manifest.numBits(),
            "k " + manifest.numHashFunctions(),
            manifest.totalBytes() + " bytes",
            expectedChunks + " chunk(s)",
            "sha256 " + manifest.sha256());
    assertThat(run.out().lines()).hasSize(1);
    assertThat(run.err()).contains("kubectl apply --server-side");
  }

  @Test
  void splitBlockFormatIsBuiltInspectedExportedAndQueried() throws Exception {
    List<String> keys = keys("sku", 50_000);
    Path out = build(keys, 8192, "--format", "SplitBlock");
    Manifest manifest = manifest(out);
    assertThat(manifest.format()).isEqualTo(Manifest.FORMAT_SPLIT_BLOCK);
    assertThat(manifest.numBits())
        .isEqualTo(SplitBlockSizing.forKeys(50_000, 0.01).numBlocks() * 256);
    assertThat(manifest.numHashFunctions()).isEqualTo(8);
    SplitBlockBits.Builder expected =
        SplitBlockBits.builder(KeyType.STRING, manifest.numBits() / 256);
    keys.forEach(expected::putString);
    byte[] bitset = expected.build().toByteArray();
    assertThat(payload(out, manifest)).as("Parquet's bitset, nothing else").isEqualTo(bitset);

    Cli.Run inspect = Cli.run("inspect", out.toString());
    assertThat(inspect.exit()).as("%s", inspect).isZero();
    assertThat(inspect.out()).contains("layout:           SplitBlock", "numHashFunctions: 8");

    Path exported = tmp.resolve("ids.bitset");
    Cli.Run export = Cli.run("export", out.toString(), "-o", exported.toString());
    assertThat(export.exit()).as("%s", export).isZero();
    assertThat(export.out()).contains("(SplitBlock)");
    assertThat(Files.readAllBytes(exported)).isEqualTo(bitset);

    Cli.Run query = Cli.run("query", out.toString(), "sku-0", "sku-49999", "nope-1");
    assertThat(query.exit()).as("%s", query).isZero();
    assertThat(query.out().lines())
        .containsExactly(
            "sku-0\tmaybe-present",
            "sku-49999\tmaybe-present",
            "nope-1\t"
                + (SplitBlockBits.fromByteArray(KeyType.STRING, bitset).mightContainString("nope-1")
                    ? "maybe-present"
                    : "absent"));

    Cli.Run wrong = Cli.run("build", "--name", FILTER, "--fpp", "0.01", "--format", "Blocked");
    assertThat(wrong.exit()).isNotZero();
    assertThat(wrong.err()).contains("expected Guava or SplitBlock");
  }

  @Test
  void inspectPrintsParametersAndVerified() throws Exception {
    Path out = build(keys("sku", KEYS), 8192);
    Manifest manifest = manifest(out);

    Cli.Run run = Cli.run("inspect", out.toString());

    assertThat(run.exit()).as("%s", run).isZero();
    assertThat(run.out())
        .contains(
            "filter:           " + FILTER,
            "version:          1",
            "keyType:          String",
            "numBits:          " + manifest.numBits(),
            "numHashFunctions: " + manifest.numHashFunctions(),
            "keyCount:         " + KEYS,
            "expectedFpp:      0.0100",
            "totalBytes:       " + manifest.totalBytes(),
            "chunks:           " + manifest.chunks().size(),
            "sha256:           " + manifest.sha256(),
            "createdAt:        " + manifest.createdAt());
    assertThat(run.out().strip()).endsWith("verified");
  }

  @Test
  void keygenBuildSigningKeyAndInspectTrustedKey() throws Exception {
    Path key = tmp.resolve("ed25519.pem");
    Path pub = tmp.resolve("ed25519.pub.pem");
    Cli.Run keygen =
        Cli.run("keygen", "--private-key", key.toString(), "--public-key", pub.toString());
    assertThat(keygen.exit()).as("%s", keygen).isZero();
    String keyId = keygen.out().strip().replace("key id: ", "");
    assertThat(keyId).hasSize(16);
    assertThat(
            Cli.run(
                    "keygen",
                    "--private-key",
                    key.toString(),
                    "--public-key",
                    tmp.resolve("other.pem").toString())
                .exit())
        .as("never overwrites a key")
        .isOne();

    assertThat(
            Cli.run(
                    "build",
                    "--name",
                    FILTER,
                    "--input",
                    gzipKeyFile(keys("k", 1_000)).toString(),
                    "--fpp",
                    "0.01",
                    "--output",
                    tmp.resolve("x").toString(),
                    "--signing-key",
                    key.toString())
                .exit())
        .as("--signing-key needs --namespace")
        .isEqualTo(2);
    Path out =
        build(keys("sku", 10_000), 8192, "--namespace", "shop", "--signing-key", key.toString());

    Cli.Run unverified = Cli.run("inspect", out.toString());
    assertThat(unverified.out())
        .contains("signature:        Ed25519 key " + keyId + " (not verified: no --trusted-key)");
    Cli.Run verified = Cli.run("inspect", out.toString(), "--trusted-key", pub.toString());
    assertThat(verified.exit()).as("%s", verified).isZero();
    assertThat(verified.out()).contains("Ed25519 key " + keyId + " (verified for namespace shop)");

    // Moved to another namespace, the signature no longer holds.
    Path manifestFile = out.resolve(SnapshotNames.manifestName(FILTER) + ".yaml");
    Files.writeString(
        manifestFile,
        Files.readString(manifestFile).replaceAll("namespace: \"?shop\"?", "namespace: staging"));
    assertThat(Files.readString(manifestFile)).contains("namespace: staging");
    Cli.Run moved = Cli.run("inspect", out.toString(), "--trusted-key", pub.toString());
    assertThat(moved.exit()).as("%s", moved).isOne();
    assertThat(moved.err()).contains("verification failed").contains("does not verify");

    Path plain = build(keys("sku", 1_000), 8192, "--force");
    assertThat(Cli.run("inspect", plain.toString()).out()).contains("signature:        unsigned");
    assertThat(Cli.run("inspect", plain.toString(), "--trusted-key", pub.toString()).exit())
        .isOne();
  }

  @Test
  void inspectFailsNamingTheTamperedChunk() throws Exception {
    Path out = build(keys("sku", KEYS), 8192);
    String victim = SnapshotNames.chunkName(FILTER, 1, 3);
    Path file = out.resolve(victim + ".yaml");
    // Flip one bit of the chunk's bytes and write the ConfigMap back, still valid YAML/base64.
    ConfigMap chunk = configMap(file);
    byte[] bytes = chunkBytes(out, manifest(out).chunks().get(3));
    bytes[100] ^= 0x10;
    Files.writeString(
        file,
        Serialization.asYaml(
            SnapshotConfigMaps.chunk(
                chunk.getMetadata().getNamespace(), FILTER, 1, 3, bytes, bytes.length)));

    Cli.Run run = Cli.run("inspect", out.toString());

    assertThat(run.exit()).as("%s", run).isEqualTo(1);
    assertThat(run.err()).contains("verification failed", "chunk 3", victim, "sha256 mismatch");
    assertThat(run.err().lines()).hasSize(1);
    assertThat(run.out()).doesNotContain("verified");

    Cli.Run query = Cli.run("query", out.toString(), "sku-1");
    assertThat(query.exit()).isEqualTo(1);
    assertThat(query.out()).isEmpty();
  }

  @Test
  void inspectFailsOnAMissingChunkFile() throws Exception {
    Path out = build(keys("sku", 20_000), 8192);
    String victim = SnapshotNames.chunkName(FILTER, 1, 1);
    Files.delete(out.resolve(victim + ".yaml"));

    Cli.Run run = Cli.run("inspect", out.toString());

    assertThat(run.exit()).isEqualTo(1);
    assertThat(run.err()).contains(victim, "missing");
  }

  @Test
  void queryAnswersAsTheDecodedFilterDoes() throws Exception {
    List<String> present = keys("sku", KEYS);
    Path out = build(present, 8192);
    Manifest manifest = manifest(out);
    BloomFilterBits decoded = SnapshotDecoder.decodePayload(payload(out, manifest), KeyType.STRING);
    List<String> absent = keys("other", 2_000);
    List<String> asked = new ArrayList<>();
    asked.addAll(present.subList(0, 1_000));
    asked.addAll(absent);

    List<String> args = new ArrayList<>(List.of("query", out.toString()));
    args.addAll(asked);
    Cli.Run run = Cli.run(args.toArray(String[]::new));

    assertThat(run.exit()).as("%s", run).isZero();
    List<String> lines = run.out().lines().toList();
    assertThat(lines).hasSize(asked.size());
    for (int i = 0; i < asked.size(); i++) {
      String key = asked.get(i);
      assertThat(lines.get(i))
          .isEqualTo(key + "\t" + (decoded.mightContainString(key) ? "maybe-present" : "absent"));
    }
    assertThat(lines.subList(0, 1_000)).allMatch(l -> l.endsWith("\tmaybe-present"));
    long falsePositives =
        lines.subList(1_000, lines.size()).stream()
            .filter(l -> l.endsWith("\tmaybe-present"))
            .count();
    assertThat(falsePositives).isLessThan(100); // 1% target: ~20 expected of 2,000
  }

  @Test
  void queryReadsKeysFileWithLineRulesAndLongKeys() throws Exception {
    Path input = Files.writeString(tmp.resolve("ids.txt"), "# ids\n1\n-7\n42\n");
    Path out = tmp.resolve("longs");
    Cli.Run build =
        Cli.run(
            "build",
            "--name",
            "ids",
            "--input",
            input.toString(),
            "--key-type",
            "Long",
            "--fpp",
            "0.000001",
            "--output",
            out.toString());
    assertThat(build.exit()).as("%s", build).isZero();
    Path keysFile = Files.writeString(tmp.resolve("ask.txt"), "  42  \n# skipped\n\n1000\n");

    Cli.Run run =
        Cli.run("query", "--keys-file", keysFile.toString(), out.toString(), "--", "-7", "x");

    assertThat(run.exit()).as("%s", run).isZero();
    assertThat(run.out().lines())
        .containsExactly("-7\tmaybe-present", "x\tabsent", "42\tmaybe-present", "1000\tabsent");
    assertThat(run.err()).contains("'x' is not a Long key");
  }

  @Test
  void buildReadsStdin() throws Exception {
    byte[] text = String.join("\n", keys("k", 5_000)).getBytes(StandardCharsets.UTF_8);
    Path out = tmp.resolve("stdin-out");
    Cli.Run run =
        Cli.run(
            new ByteArrayInputStream(text),
            "build",
            "--name",
            "from-stdin",
            "--input",
            "-",
            "--fpp",
            "0.01",
            "--output",
            out.toString());
    assertThat(run.exit()).as("%s", run).isZero();
    assertThat(run.out()).contains("5000 keys", "1 chunk(s)");

    Cli.Run query = Cli.run("query", out.toString(), "k-4999", "k-5000x");
    assertThat(query.out().lines()).first().isEqualTo("k-4999\tmaybe-present");
  }

  @Test
  void expectedInsertionsSizesForAtLeastThatMany() throws Exception {
    Path out =
        build(keys("sku", 1_000), 1_000_000, "--expected-insertions", "100000", "--version", "7");
    Manifest manifest = manifest(out);
    assertThat(manifest.numBits()).isEqualTo(BloomFilterSizing.forKeys(100_000, 0.01).numBits());
    assertThat(manifest.keyCount()).isEqualTo(1_000);
    assertThat(manifest.version()).isEqualTo(7);
    assertThat(out.resolve(SnapshotNames.chunkName(FILTER, 7, 0) + ".yaml")).exists();
  }

  @Test
  void versionsAtBothEndsOfTheOneRange() throws Exception {
    long max = io.bloomoperator.snapshot.SnapshotVersions.MAX;
    Path out = build(keys("sku", 100), 8192, "--version", Long.toString(max));
    assertThat(manifest(out).version()).isEqualTo(max);
    assertThat(out.resolve(SnapshotNames.chunkName(FILTER, max, 0) + ".yaml")).exists();
    // The CLI's own file pattern knows the file of 10^18-1 as the filter's: --force replaces it.
    build(keys("sku", 100), 8192, "--version", "1", "--force");
    try (Stream<Path> files = Files.list(out)) {
      assertThat(files.map(f -> f.getFileName().toString()).sorted())
          .containsExactly(
              SnapshotNames.chunkName(FILTER, 1, 0) + ".yaml",
              SnapshotNames.manifestName(FILTER) + ".yaml");
    }
    Path input = gzipKeyFile(keys("sku", 10));
    for (String refused : List.of(Long.toString(max + 1), "2000000000000000000", "0")) {
      Cli.Run run =
          Cli.run(
              "build",
              "--name",
              FILTER,
              "--input",
              input.toString(),
              "--fpp",
              "0.01",
              "--version",
              refused,
              "--output",
              tmp.resolve("refused").toString());
      assertThat(run.exit()).as("%s", run).isNotZero();
      assertThat(run.err()).contains("--version must be in 1.." + max);
    }
    assertThat(tmp.resolve("refused")).doesNotExist();
  }

  @Test
  void refusesToMixWithAnExistingSnapshotUnlessForced() throws Exception {
    Path out = build(keys("sku", 20_000), 8192);
    Path input = gzipKeyFile(keys("sku", 100));
    String[] again = {
      "build",
      "--name",
      FILTER,
      "--input",
      input.toString(),
      "--fpp",
      "0.01",
      "--version",
      "2",
      "--output",
      out.toString()
    };

    Cli.Run refused = Cli.run(again);
    assertThat(refused.exit()).isEqualTo(1);
    assertThat(refused.err()).contains("already holds", "--force");

    String[] forced = java.util.Arrays.copyOf(again, again.length + 1);
    forced[again.length] = "--force";
    Cli.Run replaced = Cli.run(forced);
    assertThat(replaced.exit()).as("%s", replaced).isZero();
    try (Stream<Path> files = Files.list(out)) {
      assertThat(files.map(f -> f.getFileName().toString()).sorted())
          .containsExactly(
              SnapshotNames.chunkName(FILTER, 2, 0) + ".yaml",
              SnapshotNames.manifestName(FILTER) + ".yaml");
    }
    assertThat(Cli.run("inspect", out.toString()).out()).contains("version:          2");
  }

  @Test
  void onlyTheFilesOfTheFilterCountAsItsFiles() throws Exception {
    Path out = tmp.resolve("out");
    Files.createDirectories(out);
    // Another filter's, one whose name ends like this one's, a delta chunk (never written by the
    // CLI), names the writer never gives, and files that are not YAML: none is the filter's.
    List<String> strangers =
        List.of(
            SnapshotNames.chunkName("other", 1, 0) + ".yaml",
            SnapshotNames.chunkName("x" + FILTER, 1, 0) + ".yaml",
            SnapshotNames.manifestName("x" + FILTER) + ".yml",
            SnapshotNames.deltaChunkName(FILTER, 2, 0) + ".yaml",
            SnapshotNames.manifestName(FILTER) + "-v01-0.yaml",
            SnapshotNames.manifestName(FILTER) + "-v1-01.yaml",
            SnapshotNames.manifestName(FILTER) + "-v0-0.yaml",
            SnapshotNames.chunkName(FILTER, 1, 0) + ".json",
            SnapshotNames.manifestName(FILTER) + ".yaml.bak");
    for (String name : strangers) {
      Files.writeString(out.resolve(name), "kind: ConfigMap\n");
    }
    build(keys("sku", 100), 8192, "--version", "3");
    // .yml as well as .yaml: a chunk file in either is the filter's, and --force replaces it.
    Files.writeString(out.resolve(SnapshotNames.chunkName(FILTER, 9, 0) + ".yml"), "x");
    Path input = gzipKeyFile(keys("sku", 10));
    String[] again = {
      "build",
      "--name",
      FILTER,
      "--input",
      input.toString(),
      "--fpp",
      "0.01",
      "--output",
      out.toString()
    };
    assertThat(Cli.run(again).err()).contains("already holds 3 file(s)");
    build(keys("sku", 100), 8192, "--version", "4", "--force");

    List<String> expected = new ArrayList<>(strangers);
    expected.add(SnapshotNames.chunkName(FILTER, 4, 0) + ".yaml");
    expected.add(SnapshotNames.manifestName(FILTER) + ".yaml");
    try (Stream<Path> files = Files.list(out)) {
      assertThat(files.map(f -> f.getFileName().toString()))
          .containsExactlyInAnyOrderElementsOf(expected);
    }
  }

  @Test
  void sourceErrorsExitWithOneAndOneLine() throws Exception {
    Cli.Run missing =
        Cli.run(
            "build",
            "--name",
            "x",
            "--input",
            tmp.resolve("nope.txt").toString(),
            "--fpp",
            "0.01",
            "--output",
            tmp.resolve("o").toString());
    assertThat(missing.exit()).isEqualTo(1);
    assertThat(missing.err()).contains("error: ", "nope.txt", "does not exist");
    assertThat(tmp.resolve("o")).doesNotExist();

    Path bad = Files.writeString(tmp.resolve("ids.txt"), "1\ntwo\n3\n");
    Cli.Run malformed =
        Cli.run(
            "build",
            "--name",
            "x",
            "--input",
            bad.toString(),
            "--key-type",
            "Long",
            "--fpp",
            "0.01",
            "--output",
            tmp.resolve("o").toString());
    assertThat(malformed.exit()).isEqualTo(1);
    assertThat(malformed.err()).contains("line 2 (3 characters)");

    Cli.Run tolerated =
        Cli.run(
            "build",
            "--name",
            "x",
            "--input",
            bad.toString(),
            "--key-type",
            "Long",
            "--fpp",
            "0.01",
            "--max-malformed",
            "1",
            "--output",
            tmp.resolve("o").toString());
    assertThat(tolerated.exit()).as("%s", tolerated).isZero();
    assertThat(tolerated.out()).contains("2 keys");

    Cli.Run noSnapshot = Cli.run("inspect", tmp.toString());
    assertThat(noSnapshot.exit()).isEqualTo(1);
    assertThat(noSnapshot.err()).contains("no snapshot manifest");
  }

  @Test
  void usageErrorsExitWithTwo() throws Exception {
    Path input = Files.writeString(tmp.resolve("k.txt"), "a\n");
    String out = tmp.resolve("o").toString();
    assertThat(Cli.run("build", "--name", "x", "--input", input.toString(), "--output", out).exit())
        .isEqualTo(2); // no --fpp
    assertThat(
            Cli.run(
                    "build",
                    "--name",
                    "x",
                    "--input",
                    input.toString(),
                    "--fpp",
                    "1.5",
                    "--output",
                    out)
                .exit())
        .isEqualTo(2);
    Cli.Run keyType =
        Cli.run(
            "build",
            "--name",
            "x",
            "--input",
            input.toString(),
            "--fpp",
            "0.1",
            "--key-type",
            "string",
            "--output",
            out);
    assertThat(keyType.exit()).isEqualTo(2);
    assertThat(keyType.err()).contains("expected String or Long");
    assertThat(
            Cli.run(
                    "build",
                    "--name",
                    "Not_A_Name",
                    "--input",
                    input.toString(),
                    "--fpp",
                    "0.1",
                    "--output",
                    out)
                .exit())
        .isEqualTo(2);
    assertThat(
            Cli.run(
                    "build",
                    "--name",
                    "x",
                    "--input",
                    input.toString(),
                    "--fpp",
                    "0.1",
                    "--chunk-size",
                    "100",
                    "--output",
                    out)
                .exit())
        .isEqualTo(2);
    assertThat(Cli.run("inspect").exit()).isEqualTo(2);
    assertThat(Cli.run("inspect", out, "--namespace", "ns", "--name", "x").exit()).isEqualTo(2);
    assertThat(Cli.run("inspect", "--namespace", "ns").exit()).isEqualTo(2);
    assertThat(Cli.run("query", out).exit()).isEqualTo(2); // no keys
    assertThat(Cli.run("frobnicate").exit()).isEqualTo(2);
    assertThat(Cli.run().exit()).isEqualTo(2);
    assertThat(tmp.resolve("o")).doesNotExist();
  }

  @Test
  void helpDocumentsTheCommands() {
    Cli.Run help = Cli.run("--help");
    assertThat(help.exit()).isZero();
    assertThat(help.out()).contains("build", "inspect", "query", "kubectl apply --server-side");
    Cli.Run build = Cli.run("build", "--help");
    assertThat(build.exit()).isZero();
    assertThat(build.out())
        .contains(
            "--expected-insertions",
            "--chunk-size",
            "--max-malformed",
            "--version",
            "gzip",
            "immutable");
    Cli.Run query = Cli.run("help", "query");
    assertThat(query.exit()).isZero();
    assertThat(query.out()).contains("maybe-present", "--keys-file", "--kubeconfig");
  }

  @Test
  void operatorMainDispatchesOnlyCommands() {
    assertThat(BloomCli.isCliInvocation(new String[] {"build", "--name", "x"})).isTrue();
    assertThat(BloomCli.isCliInvocation(new String[] {"inspect", "dir"})).isTrue();
    assertThat(BloomCli.isCliInvocation(new String[] {"query"})).isTrue();
    assertThat(BloomCli.isCliInvocation(new String[] {"status", "ids"})).isTrue();
    assertThat(BloomCli.isCliInvocation(new String[] {"rebuild", "ids"})).isTrue();
    assertThat(BloomCli.isCliInvocation(new String[] {"size", "--keys", "1"})).isTrue();
    assertThat(BloomCli.isCliInvocation(new String[] {"--help"})).isTrue();
    assertThat(BloomCli.isCliInvocation(new String[0])).isFalse();
    assertThat(BloomCli.isCliInvocation(new String[] {"--something-else"})).isFalse();
  }
}
