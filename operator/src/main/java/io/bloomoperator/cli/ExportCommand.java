package io.bloomoperator.cli;

import io.bloomoperator.snapshot.SnapshotEncoder;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code export}: writes the whole payload of a published version, so that anyone outside (Guava's
 * {@code BloomFilter.readFrom}, a reader of Parquet Bloom filters, another language) can use a
 * filter whatever its chain.
 */
@Command(
    name = "export",
    description = {
      "Verifies a snapshot like 'inspect' (base and delta chain, every digest) and writes the "
          + "whole payload of the current version, or of an earlier one the chain still holds "
          + "(--version), to a file: for format Guava exactly what Guava's BloomFilter.writeTo "
          + "writes, readable with BloomFilter.readFrom(in, funnel); for SplitBlock Parquet's "
          + "split-block bitset, readable by readers of Parquet Bloom filters "
          + "(e.g. new BlockSplitBloomFilter(bytes)).",
    },
    sortOptions = false)
final class ExportCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Parameters(
      arity = "0..1",
      paramLabel = "<dir>",
      description = "Directory holding the snapshot's YAML files.")
  Path dir;

  @Mixin SnapshotLocation location;

  @Option(
      names = {"-o", "--output"},
      required = true,
      paramLabel = "<file>",
      description = "File to write the payload to (replaced atomically).")
  Path output;

  @Mixin HelpOption help;

  @Override
  public Integer call() throws CliException {
    location.validate(spec, dir);
    VerifiedSnapshot snapshot = location.load(dir);
    long version = location.version == null ? snapshot.manifest().version() : location.version;
    Path target = output.toAbsolutePath();
    SnapshotEncoder.Result written;
    try {
      Path temp = Files.createTempFile(target.getParent(), ".bloom-export", ".tmp");
      try {
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(temp), 1 << 16)) {
          written = SnapshotEncoder.writeTo(snapshot.bits(), out);
        }
        Files.move(
            temp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      } finally {
        Files.deleteIfExists(temp);
      }
    } catch (IOException e) {
      throw new CliException("writing " + output + " failed: " + e.getMessage(), e);
    }
    PrintWriter out = spec.commandLine().getOut();
    out.println(
        "wrote version "
            + version
            + " of '"
            + snapshot.manifest().filterName()
            + "' ("
            + snapshot.bits().format().crdName()
            + "): "
            + written.totalBytes()
            + " bytes, sha256 "
            + written.sha256()
            + " -> "
            + output);
    out.flush();
    return BloomCli.EXIT_OK;
  }
}
