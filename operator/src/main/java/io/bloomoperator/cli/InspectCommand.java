package io.bloomoperator.cli;

import io.bloomoperator.snapshot.Manifest;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code inspect}: verifies a snapshot and prints its parameters. */
@Command(
    name = "inspect",
    description = {
      "Reads a snapshot (manifest and every chunk) from a directory written by 'build', or "
          + "from the cluster with --namespace and --name (one GET per ConfigMap, by name), "
          + "verifies it as sidecar-lib does (manifest fields, chunk sizes and sha256, header, "
          + "payload sha256, limits and chunk names; the signature with --trusted-key), prints "
          + "its parameters, which key signed it, and 'verified'.",
      "Exits with 1 and names the offending chunk when verification fails."
    },
    sortOptions = false)
final class InspectCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Parameters(
      arity = "0..1",
      paramLabel = "<dir>",
      description = "Directory holding the snapshot's YAML files.")
  Path dir;

  @Mixin SnapshotLocation location;

  @Mixin HelpOption help;

  @Override
  public Integer call() throws CliException {
    location.validate(spec, dir);
    VerifiedSnapshot snapshot = location.load(dir);
    Manifest m = snapshot.manifest();
    PrintWriter out = spec.commandLine().getOut();
    out.println("source:           " + snapshot.origin());
    out.println("filter:           " + m.filterName());
    out.println("version:          " + m.version());
    out.println("keyType:          " + m.keyType().crdName());
    out.println("layout:           " + m.filterFormat().crdName());
    out.println("numBits:          " + m.numBits());
    out.println("numHashFunctions: " + m.numHashFunctions());
    out.println("keyCount:         " + m.keyCount());
    out.println("expectedFpp:      " + String.format(Locale.ROOT, "%.3g", m.expectedFpp()));
    out.println("totalBytes:       " + m.totalBytes());
    out.println("chunks:           " + m.chunkCount());
    if (m.chained()) {
      out.println("format:           " + m.format());
      out.println("baseVersion:      " + m.baseVersion() + " (" + m.baseBytes() + " bytes)");
      for (Manifest.Delta delta : m.deltas()) {
        out.println(
            "delta:            v"
                + delta.version()
                + ": "
                + delta.bytes()
                + " bytes, "
                + delta.changedBits()
                + " bits changed");
      }
    }
    if (location.version != null && location.version != m.version()) {
      out.println(
          "loaded version:   "
              + location.version
              + " (verified; the fields above are v"
              + m.version()
              + "'s)");
    }
    out.println("sha256:           " + m.sha256());
    out.println("createdAt:        " + m.createdAt());
    out.println("signature:        " + snapshot.signature());
    out.println("verified");
    out.flush();
    return BloomCli.EXIT_OK;
  }
}
