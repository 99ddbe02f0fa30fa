package io.bloomoperator.cli;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.api.SnapshotSpec;
import io.bloomoperator.assemble.BuildWorkers;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.assemble.FilterTooLargeException;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Ed25519Keys;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.ManifestSigner;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotVersions;
import io.bloomoperator.source.FileSource;
import io.bloomoperator.source.SourceException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.InvalidKeyException;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code build}: a local key file into snapshot ConfigMap manifests, sized as the operator does.
 */
@Command(
    name = "build",
    description = {
      "Builds a Bloom filter from a local file of newline-separated keys and writes its snapshot "
          + "as ConfigMap manifests into a directory: one immutable chunk ConfigMap per "
          + "<chunk-size> bytes (<filter>-bloom-v<version>-<index>.yaml) and the manifest "
          + "ConfigMap (<filter>-bloom.yaml), named and labelled as the operator names them, "
          + "without ownerReferences.",
      "The input may be plain or gzip-compressed (detected from its content); blank lines and "
          + "lines starting with # are skipped, keys are trimmed. Sizing is the operator's: "
          + "without --expected-insertions the input is read twice (count, then build).",
      "Apply the result with 'kubectl apply --server-side -n <ns> -f <dir>' (or 'kubectl "
          + "create -f <dir>' the first time); client-side 'kubectl apply' does not work: its "
          + "last-applied annotation cannot hold a chunk. kubectl reads a directory in name "
          + "order, so chunks are created before their manifest.",
      "Chunk ConfigMaps are immutable: publish new content with a higher --version, then delete "
          + "the old version's chunk ConfigMaps once no reader needs them "
          + "(kubectl delete cm -n <ns> -l bloomoperator.io/filter=<filter>,"
          + "bloomoperator.io/version=<old>)."
    },
    sortOptions = false)
final class BuildCommand implements Callable<Integer> {

  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");

  @ParentCommand BloomCli parent;

  @Spec CommandSpec spec;

  @Option(
      names = "--name",
      required = true,
      paramLabel = "<filter>",
      description = "The filter's name (what sidecars pass to BloomFilterWatcher.watch).")
  String name;

  @Option(
      names = {"-n", "--namespace"},
      paramLabel = "<ns>",
      description =
          "Namespace written into the manifests (default: none, so 'kubectl -n' or "
              + "the current context decides).")
  String namespace;

  @Option(
      names = {"-i", "--input"},
      required = true,
      paramLabel = "<file|->",
      description =
          "Key file, plain or gzip; '-' reads stdin (copied to a temporary file, "
              + "since sizing may need a second pass).")
  String input;

  @Option(
      names = "--key-type",
      paramLabel = "String|Long",
      defaultValue = "String",
      converter = KeyTypeConverter.class,
      description =
          "How keys are hashed: String (UTF-8) or Long (decimal numbers). "
              + "Default: ${DEFAULT-VALUE}.")
  KeyType keyType;

  @Option(
      names = "--format",
      paramLabel = "Guava|SplitBlock",
      defaultValue = "Guava",
      converter = FormatConverter.class,
      description =
          "Bit layout, as spec.format: Guava (BloomFilter.writeTo's bytes) or SplitBlock "
              + "(Parquet's split-block filter). Default: ${DEFAULT-VALUE}.")
  FilterFormat format;

  @Option(
      names = "--fpp",
      required = true,
      paramLabel = "<p>",
      description = "Target false-positive probability, in (0, 1), e.g. 0.001.")
  double fpp;

  @Option(
      names = "--expected-insertions",
      paramLabel = "<N>",
      description = "Size for at least N keys and read the input once (unless it holds more).")
  Long expectedInsertions;

  @Option(
      names = "--chunk-size",
      paramLabel = "<bytes>",
      defaultValue = "1000000",
      description = "Bytes per chunk ConfigMap, 1024..1000000. Default: ${DEFAULT-VALUE}.")
  int chunkSize;

  @Option(
      names = "--version",
      paramLabel = "<N>",
      defaultValue = "1",
      description =
          "Snapshot version (part of the chunk names), 1..999999999999999999; raise it for "
              + "every new build of the same filter. Default: ${DEFAULT-VALUE}.")
  long version;

  @Option(
      names = "--max-malformed",
      paramLabel = "<N>",
      defaultValue = "0",
      description =
          "Lines that are not Long keys tolerated (and skipped) before failing. "
              + "Default: ${DEFAULT-VALUE}.")
  long maxMalformed;

  @Option(
      names = "--max-snapshot-bytes",
      paramLabel = "<bytes>",
      defaultValue = "" + OperatorSettings.Snapshots.DEFAULT_MAX_BYTES,
      description =
          "Refuse filters whose snapshot would be larger (the operator's default "
              + "limit). Default: ${DEFAULT-VALUE}.")
  long maxSnapshotBytes;

  @Option(
      names = "--signing-key",
      paramLabel = "<pem>",
      description =
          "Sign the manifest with this Ed25519 private key (PKCS#8 PEM, e.g. from "
              + "'keygen' or 'openssl genpkey -algorithm ed25519'); needs --namespace, which the "
              + "signature covers. Sidecars with trustedKey() accept only signed manifests.")
  Path signingKey;

  @Option(
      names = {"-o", "--output"},
      required = true,
      paramLabel = "<dir>",
      description = "Directory for the YAML files (created if missing).")
  Path output;

  @Option(
      names = "--store",
      paramLabel = "<bloomstore>",
      description =
          "Write the chunks to this BloomStore's bucket (given with --store-endpoint, "
              + "--store-bucket and write credentials) instead of chunk ConfigMaps; the manifest "
              + "names the store. Needs --namespace: objects are <prefix>/<namespace>/<filter>/.")
  String store;

  @picocli.CommandLine.Mixin StoreOptions storeOptions = new StoreOptions();

  @Option(
      names = "--force",
      description = "Replace files of this filter already in <dir> (all versions).")
  boolean force;

  @Mixin HelpOption help;

  @Override
  public Integer call() throws CliException {
    validate();
    ManifestSigner signer = signer();
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    SnapshotFiles files = new SnapshotFiles(output);
    List<Path> existing = existingFiles(files);
    if (!existing.isEmpty() && !force) {
      throw new CliException(
          output
              + " already holds "
              + existing.size()
              + " file(s) of filter '"
              + name
              + "' (e.g. "
              + existing.get(0).getFileName()
              + "); use an empty directory or --force to replace them");
    }
    Path spooled = null;
    try {
      Path file;
      String what;
      if ("-".equals(input)) {
        spooled = spool(parent.stdin());
        file = spooled;
        what = "stdin";
      } else {
        file = Path.of(input);
        what = "file " + file;
      }
      FilterBuilder.Result built = build(file, what, err);
      if (built.keys() == 0) {
        err.println("warning: " + what + " holds no keys; the filter answers absent for every key");
      }
      writeSnapshot(files, existing, built, signer, out, err);
      return BloomCli.EXIT_OK;
    } finally {
      if (spooled != null) {
        try {
          Files.deleteIfExists(spooled);
        } catch (IOException e) {
          err.println(
              "warning: could not delete temporary file " + spooled + ": " + e.getMessage());
        }
      }
    }
  }

  /** Whether {@code name} is a Kubernetes object name a filter (and its ConfigMaps) can have. */
  static boolean validName(String name) {
    return DNS_SUBDOMAIN.matcher(name).matches() && name.length() <= SnapshotNames.MAX_NAME_LENGTH;
  }

  private void validate() {
    if (!validName(name)) {
      throw new ParameterException(
          spec.commandLine(),
          "--name '"
              + name
              + "' is not a valid Kubernetes object name (lower-case letters, digits, '-' and '.')");
    }
    if (namespace != null
        && (!DNS_LABEL.matcher(namespace).matches()
            || namespace.length() > SnapshotNames.MAX_LABEL_VALUE_LENGTH)) {
      throw new ParameterException(
          spec.commandLine(), "--namespace '" + namespace + "' is not a valid namespace name");
    }
    if (!(fpp > 0 && fpp < 1)) {
      throw new ParameterException(spec.commandLine(), "--fpp must be in (0, 1), got " + fpp);
    }
    if (expectedInsertions != null && expectedInsertions < 1) {
      throw new ParameterException(spec.commandLine(), "--expected-insertions must be >= 1");
    }
    if (chunkSize < 1024 || chunkSize > SnapshotSpec.MAX_CHUNK_BYTES) {
      throw new ParameterException(
          spec.commandLine(),
          "--chunk-size must be in 1024.." + SnapshotSpec.MAX_CHUNK_BYTES + ", got " + chunkSize);
    }
    if (!SnapshotVersions.valid(version)) {
      throw new ParameterException(
          spec.commandLine(),
          "--version must be in "
              + SnapshotVersions.MIN
              + ".."
              + SnapshotVersions.MAX
              + ", got "
              + version);
    }
    if (maxMalformed < 0) {
      throw new ParameterException(spec.commandLine(), "--max-malformed must be >= 0");
    }
    if (signingKey != null && namespace == null) {
      throw new ParameterException(
          spec.commandLine(),
          "--signing-key needs --namespace: the "
              + "signature covers the namespace the snapshot is published in");
    }
    if (maxSnapshotBytes < 1) {
      throw new ParameterException(spec.commandLine(), "--max-snapshot-bytes must be >= 1");
    }
    if (store != null && namespace == null) {
      throw new ParameterException(
          spec.commandLine(),
          "--store needs --namespace: the objects' keys hold the namespace they are read in");
    }
    if (store == null && storeOptions.given()) {
      throw new ParameterException(spec.commandLine(), "--store-* options need --store");
    }
  }

  private ManifestSigner signer() throws CliException {
    if (signingKey == null) {
      return null;
    }
    try {
      return new ManifestSigner(
          Ed25519Keys.readPrivateKey(Files.readString(signingKey, StandardCharsets.UTF_8)));
    } catch (IOException e) {
      throw new CliException("cannot read --signing-key " + signingKey + ": " + e.getMessage(), e);
    } catch (InvalidKeyException e) {
      throw new CliException(
          "--signing-key " + signingKey + " is not an Ed25519 private key in PKCS#8 PEM form");
    }
  }

  private List<Path> existingFiles(SnapshotFiles files) throws CliException {
    if (Files.exists(output) && !Files.isDirectory(output)) {
      throw new CliException("--output " + output + " exists and is not a directory");
    }
    try {
      return files.filesOf(name);
    } catch (IOException e) {
      throw new CliException("cannot list " + output + ": " + e.getMessage(), e);
    }
  }

  private static Path spool(InputStream stdin) throws CliException {
    try {
      Path temp = Files.createTempFile("bloom-operator-keys-", ".tmp");
      Files.copy(stdin, temp, StandardCopyOption.REPLACE_EXISTING);
      return temp;
    } catch (IOException e) {
      throw new CliException("reading stdin failed: " + e.getMessage(), e);
    }
  }

  private FilterBuilder.Result build(Path file, String what, PrintWriter err) throws CliException {
    ProgressSource source = new ProgressSource(new FileSource(file), err, System::nanoTime);
    if (expectedInsertions == null) {
      err.println(
          "reading "
              + what
              + " twice: once to count keys for sizing, once to build "
              + "(--expected-insertions reads it once)");
    }
    try {
      return new FilterBuilder(keys -> {}, BuildWorkers.allProcessors(4))
          .build(
              source,
              new FilterBuilder.Request(
                  keyType, fpp, expectedInsertions, maxMalformed, maxSnapshotBytes, null, format));
    } catch (SourceException e) {
      String message = e.getMessage();
      if ("-".equals(input)) {
        message = message.replace("file " + file, "stdin");
      }
      if (Reasons.MALFORMED_KEYS.equals(e.reason())) {
        message = what + ": " + message + " (--max-malformed raises the limit)";
      }
      throw new CliException(message, e);
    } catch (FilterTooLargeException e) {
      throw new CliException(e.getMessage() + " (--max-snapshot-bytes)", e);
    } finally {
      if (expectedInsertions != null && source.passes() > 1) {
        err.println(
            "note: "
                + what
                + " holds more keys than --expected-insertions "
                + expectedInsertions
                + ", so it was read again to size the filter for all of them");
      }
    }
  }

  private void writeSnapshot(
      SnapshotFiles files,
      List<Path> existing,
      FilterBuilder.Result built,
      ManifestSigner signer,
      PrintWriter out,
      PrintWriter err)
      throws CliException {
    BloomFilterBits bits = built.bits();
    software.amazon.awssdk.services.s3.S3Client s3 =
        store == null ? null : storeOptions.client(store);
    try {
      Files.createDirectories(output);
      for (Path old : existing) {
        Files.deleteIfExists(old);
      }
      // Each chunk goes to disk as soon as it is encoded: memory is the bit array plus one chunk.
      SnapshotEncoder.Result encoded;
      if (s3 == null) {
        encoded =
            SnapshotEncoder.encode(
                bits,
                chunkSize,
                (index, data, length, sha256) ->
                    files.writeChunk(name, namespace, version, index, data, length));
      } else {
        // Objects first, as the operator writes them: no manifest names a missing object.
        var objects = storeOptions.chunks(s3, store, namespace, name);
        encoded =
            SnapshotEncoder.encode(
                bits,
                chunkSize,
                (index, data, length, sha256) ->
                    objects.create(
                        io.bloomoperator.snapshot.ChunkStore.Part.base(version),
                        index,
                        data,
                        length,
                        sha256));
      }
      Manifest manifest =
          Manifest.of(name, version, bits, built.keys(), encoded, Instant.now()).inStore(store);
      files.writeManifest(manifest, namespace, signer);
      if (signer != null) {
        err.println(
            "signed the manifest for namespace " + namespace + " with key " + signer.keyId());
      }
      if (built.malformed() > 0) {
        err.printf(
            Locale.ROOT,
            "skipped %,d malformed line(s) (--max-malformed %d)%n",
            built.malformed(),
            maxMalformed);
      }
      out.printf(
          Locale.ROOT,
          "built filter '%s' v%d: %s, %d keys, numBits %d, k %d, expected FPP "
              + "%.3g, %d bytes, %d chunk(s), sha256 %s; wrote %d files to %s in %.1f s%n",
          name,
          version,
          manifest.filterFormat().crdName(),
          manifest.keyCount(),
          manifest.numBits(),
          manifest.numHashFunctions(),
          manifest.expectedFpp(),
          manifest.totalBytes(),
          manifest.chunks().size(),
          manifest.sha256(),
          manifest.chunks().size() + 1,
          output,
          built.took().toMillis() / 1000.0);
      out.flush();
      err.println(
          "apply with: kubectl apply --server-side"
              + (namespace == null ? " -n <namespace>" : "")
              + " -f "
              + output);
      err.flush();
    } catch (IOException e) {
      throw new CliException(
          "writing " + (s3 == null ? output : "to object store '" + store + "'") + " failed: " + e,
          e);
    } finally {
      if (s3 != null) {
        s3.close();
      }
    }
  }

  /** Strict, as in the BloomFilter resource: a typo must not select another hashing scheme. */
  static final class FormatConverter implements ITypeConverter<FilterFormat> {
    @Override
    public FilterFormat convert(String value) {
      try {
        return FilterFormat.fromCrdName(value);
      } catch (IllegalArgumentException e) {
        throw new TypeConversionException("expected Guava or SplitBlock, got '" + value + "'");
      }
    }
  }

  static final class KeyTypeConverter implements ITypeConverter<KeyType> {
    @Override
    public KeyType convert(String value) {
      try {
        return KeyType.fromCrdName(value);
      } catch (IllegalArgumentException e) {
        throw new TypeConversionException("expected String or Long, got '" + value + "'");
      }
    }
  }
}
