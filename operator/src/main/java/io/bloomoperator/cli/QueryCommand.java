package io.bloomoperator.cli;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.source.FileSource;
import io.bloomoperator.source.KeySink;
import io.bloomoperator.source.SourceException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code query}: looks keys up in a verified snapshot. */
@Command(
    name = "query",
    description = {
      "Loads and verifies a snapshot (from a directory, or from the cluster with --namespace "
          + "and --name, in which case every argument is a key) and prints one line per key: "
          + "'<key><TAB>maybe-present' or '<key><TAB>absent'.",
      "Keys given as arguments are looked up exactly as typed; keys from --keys-file follow "
          + "the build's line rules (trimmed; blank lines and # comments skipped).",
      "Put -- before keys that start with '-' (e.g. negative Long keys)."
    },
    sortOptions = false)
final class QueryCommand implements Callable<Integer> {

  @ParentCommand BloomCli parent;

  @Spec CommandSpec spec;

  @Parameters(
      arity = "0..*",
      paramLabel = "[<dir>] <key>",
      description = "The snapshot directory (unless --namespace is given), then the keys.")
  List<String> arguments = new ArrayList<>();

  @Option(
      names = "--keys-file",
      paramLabel = "<file|->",
      description = "Also look up the keys in this file (plain or gzip; '-' reads stdin).")
  String keysFile;

  @Mixin SnapshotLocation location;

  @Mixin HelpOption help;

  @Override
  public Integer call() throws CliException {
    List<String> keys = new ArrayList<>(arguments);
    Path dir = null;
    if (!location.fromCluster() && !keys.isEmpty()) {
      dir = Path.of(keys.remove(0));
    }
    location.validate(spec, dir);
    if (keys.isEmpty() && keysFile == null) {
      throw new ParameterException(spec.commandLine(), "give at least one key or --keys-file");
    }
    VerifiedSnapshot snapshot = location.load(dir);
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    Lookup lookup = new Lookup(snapshot.bits(), out, err);
    for (String key : keys) {
      lookup.value(key);
    }
    if (keysFile != null) {
      readKeysFile(lookup);
    }
    out.flush();
    return BloomCli.EXIT_OK;
  }

  private void readKeysFile(Lookup lookup) throws CliException {
    try {
      if ("-".equals(keysFile)) {
        try (BufferedReader reader = new BufferedReader(FileSource.textReader(parent.stdin()))) {
          String line;
          while ((line = reader.readLine()) != null) {
            lookup.line(line);
          }
        }
      } else {
        new FileSource(Path.of(keysFile)).readKeys(lookup);
      }
    } catch (SourceException e) {
      throw new CliException(e.getMessage(), e);
    } catch (IOException e) {
      throw new CliException("reading stdin failed: " + e.getMessage(), e);
    }
  }

  /** Answers each key as it arrives, so a keys file is never held in memory. */
  private static final class Lookup implements KeySink {
    private final BloomFilterBits bits;
    private final PrintWriter out;
    private final PrintWriter err;

    Lookup(BloomFilterBits bits, PrintWriter out, PrintWriter err) {
      this.bits = bits;
      this.out = out;
      this.err = err;
    }

    @Override
    public void line(String rawLine) {
      String key = rawLine.strip();
      if (!key.isEmpty() && key.charAt(0) != '#') {
        value(key);
      }
    }

    @Override
    public void value(String key) {
      boolean present;
      if (bits.keyType() == KeyType.LONG) {
        try {
          present = bits.mightContainLong(Long.parseLong(key.strip()));
        } catch (NumberFormatException e) {
          // The build skips such lines, so a Long filter cannot hold this key.
          err.println("note: '" + key + "' is not a Long key");
          present = false;
        }
      } else {
        present = bits.mightContainString(key);
      }
      out.println(key + "\t" + (present ? "maybe-present" : "absent"));
    }

    @Override
    public void value(long key) {
      value(Long.toString(key));
    }

    @Override
    public void nullValue() {}
  }
}
