package io.bloomoperator.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.bloomoperator.api.BloomFilterSpec;
import io.bloomoperator.api.ByteSizes;
import io.bloomoperator.api.ResolvedSpec;
import io.bloomoperator.api.SnapshotSpec;
import io.bloomoperator.publish.DeltaPolicy;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code size}: what one filter costs in etcd, in an object store and in every reader pod. */
@Command(
    name = "size",
    description = {
      "Prints what a filter of --keys keys at --fpp costs, computed by the code the operator and"
          + " the readers run: its bits, hash functions and payload; its chunks, what a publish"
          + " costs etcd as ConfigMaps, whether it fits the operator's default ConfigMap limit or"
          + " needs an object store; what a refresh of --churn changed keys costs (an upper bound"
          + " of the delta) and whether the operator publishes it as a delta; the heap a reader"
          + " needs to hold and swap it, a -Xmx and container memory hint, and with --pods the"
          + " cost for all readers. Needs no cluster.",
      "What each figure means: docs/sizing.md.",
      "",
      "Example:",
      "  kubectl bloom size --keys 100000000 --fpp 0.01 --churn 1000000 --pods 20",
    },
    sortOptions = false)
final class SizeCommand implements Callable<Integer> {

  private static final String ROW = "  %-20s%s%n";
  private static final long MIB = 1024 * 1024;

  /** Pods beyond this are a typo, not a cluster. */
  static final long MAX_PODS = 1_000_000;

  @Spec CommandSpec spec;

  @Option(
      names = "--keys",
      required = true,
      paramLabel = "<N>",
      description =
          "Keys in the filter (spec.expectedInsertions), 1.."
              + BloomFilterSpec.MAX_EXPECTED_INSERTIONS
              + ".")
  long keys;

  @Option(
      names = "--fpp",
      required = true,
      paramLabel = "<p>",
      description = "Target false-positive rate (spec.falsePositiveRate), 1e-9 <= p < 1.")
  double fpp;

  @Option(
      names = "--format",
      paramLabel = "Guava|SplitBlock",
      defaultValue = "Guava",
      converter = BuildCommand.FormatConverter.class,
      description = "Bit layout (spec.format). Default: ${DEFAULT-VALUE}.")
  FilterFormat format;

  @Option(
      names = "--key-type",
      paramLabel = "String|Long",
      defaultValue = "String",
      converter = BuildCommand.KeyTypeConverter.class,
      description =
          "Key type (spec.keyType); the size does not depend on it. Default: ${DEFAULT-VALUE}.")
  KeyType keyType;

  @Option(
      names = "--chunk-size",
      paramLabel = "<bytes>",
      defaultValue = "" + SnapshotSpec.DEFAULT_CHUNK_BYTES,
      description =
          "Bytes per chunk (spec.snapshot.chunkSizeBytes), 1024.."
              + SnapshotSpec.MAX_CHUNK_BYTES
              + "; the operator raises it to keep a version within its chunk limit."
              + " Default: ${DEFAULT-VALUE}.")
  int chunkSize;

  @Option(
      names = "--churn",
      paramLabel = "<C>",
      description =
          "Keys added or removed between two versions, 0..2 x --keys. Default: 1 %% of --keys.")
  Long churn;

  @Option(
      names = "--pods",
      paramLabel = "<P>",
      defaultValue = "1",
      description = "Reader pods, 1.." + MAX_PODS + ". Default: ${DEFAULT-VALUE}.")
  long pods;

  @Option(
      names = "--name",
      paramLabel = "<filter>",
      defaultValue = "product-ids",
      description =
          "The filter's name: chunk names, and so the manifest's size, depend on it."
              + " Default: ${DEFAULT-VALUE}.")
  String name;

  @Option(
      names = {"-o", "--output"},
      paramLabel = "table|json",
      defaultValue = "table",
      description = "A table for people, or json for scripts. Default: ${DEFAULT-VALUE}.")
  String output;

  @Mixin HelpOption help;

  @Override
  public Integer call() {
    SizeEstimate estimate = estimate();
    PrintWriter out = spec.commandLine().getOut();
    if (output.equals("json")) {
      out.println(json(estimate));
    } else {
      table(estimate, out);
    }
    out.flush();
    return BloomCli.EXIT_OK;
  }

  /** The estimate, or a usage error naming the option that is out of the operator's bounds. */
  private SizeEstimate estimate() {
    if (!output.equals("table") && !output.equals("json")) {
      throw usage("-o must be table or json, got '" + output + "'");
    }
    if (keys < 1) {
      throw usage("--keys must be >= 1, got " + keys);
    }
    // The bounds the operator enforces on a BloomFilter, with its messages.
    BloomFilterSpec asSpec = new BloomFilterSpec();
    asSpec.setFalsePositiveRate(fpp);
    asSpec.setExpectedInsertions(keys);
    SnapshotSpec snapshot = new SnapshotSpec();
    snapshot.setChunkSizeBytes(chunkSize);
    asSpec.setSnapshot(snapshot);
    try {
      ResolvedSpec.of(asSpec, Duration.ZERO);
    } catch (IllegalArgumentException e) {
      throw usage(
          e.getMessage()
              .replace("spec.falsePositiveRate", "--fpp")
              .replace("spec.expectedInsertions", "--keys")
              .replace("spec.snapshot.chunkSizeBytes", "--chunk-size"));
    }
    long changed = churn == null ? Math.max(1, keys / 100) : churn;
    if (changed < 0 || changed > 2 * keys) {
      throw usage("--churn must be in 0.." + 2 * keys + ", got " + changed);
    }
    if (pods < 1 || pods > MAX_PODS) {
      throw usage("--pods must be in 1.." + MAX_PODS + ", got " + pods);
    }
    if (!BuildCommand.validName(name)) {
      throw usage("--name '" + name + "' is not a valid Kubernetes object name");
    }
    try {
      return SizeEstimate.of(
          new SizeEstimate.Input(keys, fpp, format, keyType, chunkSize, changed, pods, name));
    } catch (IllegalArgumentException e) {
      // The builder refuses it as it would refuse the BloomFilter (SnapshotTooLarge).
      throw usage("the operator cannot build this filter: " + e.getMessage());
    }
  }

  private ParameterException usage(String message) {
    return new ParameterException(spec.commandLine(), message);
  }

  static String json(SizeEstimate estimate) {
    try {
      return new ObjectMapper()
          .enable(SerializationFeature.INDENT_OUTPUT)
          .writeValueAsString(estimate);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("records of numbers and strings always serialise", e);
    }
  }

  static void table(SizeEstimate e, PrintWriter out) {
    SizeEstimate.Input in = e.input();
    SizeEstimate.Geometry g = e.geometry();
    SizeEstimate.Transport t = e.transport();
    SizeEstimate.Refresh r = e.refresh();
    SizeEstimate.Reader reader = e.reader();
    SizeEstimate.Cluster c = e.cluster();
    out.printf(
        Locale.ROOT,
        "%,d %s keys at fpp %s, %s layout%n",
        in.keys(),
        in.keyType().crdName(),
        in.fpp(),
        in.format().crdName());
    out.println("filter");
    row(out, "bits", String.format(Locale.ROOT, "%,d (%.2f per key)", g.numBits(), g.bitsPerKey()));
    row(out, "hash functions", String.valueOf(g.numHashFunctions()));
    row(
        out,
        "expected fpp",
        String.format(Locale.ROOT, "%.4g at %,d keys", g.expectedFpp(), in.keys()));
    row(out, "payload", bytes(g.payloadBytes()));
    out.println("transport");
    row(
        out,
        "chunks",
        String.format(Locale.ROOT, "%,d of at most %,d bytes", t.chunks(), t.chunkSize()));
    row(
        out,
        "ConfigMaps",
        t.fitsConfigMaps()
            ? "fit: within BLOOM_MAX_SNAPSHOT_BYTES ("
                + ByteSizes.human(t.maxConfigMapBytes())
                + ")"
            : "too large: over BLOOM_MAX_SNAPSHOT_BYTES ("
                + ByteSizes.human(t.maxConfigMapBytes())
                + "); use an object store (spec.snapshot.store, and"
                + " BLOOM_MAX_STORE_SNAPSHOT_BYTES >= payload)");
    row(
        out,
        "etcd, ConfigMaps",
        bytes(t.configMapEtcdBytes())
            + " per publish (chunks + manifest"
            + (t.fitsConfigMaps() ? ")" : ", were the limit raised)"));
    row(out, "etcd, object store", bytes(t.manifestEtcdBytes()) + " per publish (the manifest)");
    row(out, "object store", bytes(t.objectStoreBytes()) + " per version");
    out.printf(Locale.ROOT, "refresh (%,d keys changed)%n", r.churn());
    row(
        out,
        "changed bits",
        String.format(Locale.ROOT, "<= %,d (churn x k)", r.changedBitsBound()));
    row(out, "delta", "<= " + bytes(r.deltaBytesBound()) + ", an upper bound");
    row(out, "whole snapshot", bytes(r.wholeBytes()));
    row(
        out,
        "published as",
        r.publishedAs().equals("DELTA")
            ? "a delta (the bound is within "
                + bytes(r.maxDeltaBytes())
                + ", "
                + DeltaPolicy.DEFAULT_MAX_DELTA_PERCENT
                + " % of the payload)"
            : "a whole snapshot, unless the real delta is within "
                + bytes(r.maxDeltaBytes())
                + " (the bound is not)");
    String bound = r.publishedAs().equals("DELTA") ? "<= " : "";
    row(out, "per reader", bound + bytes(r.bytesPerReader()) + " downloaded");
    row(out, "etcd, ConfigMaps", bound + bytes(r.configMapEtcdBytes()));
    out.println("reader (heap mode)");
    row(out, "filter", bytes(reader.filterBytes()) + " (one long[])");
    row(out, "first load peak", bytes(reader.coldStartPeakBytes()) + " (filter + 1 chunk)");
    row(
        out,
        "refresh peak",
        bytes(reader.refreshPeakBytes()) + " (served + new filter + 1 chunk, whole or delta)");
    row(
        out,
        "heap flag",
        String.format(
            Locale.ROOT,
            "-Xmx%dm (the reader's default maxSnapshotBytes is a quarter of the heap)",
            reader.xmxBytes() / MIB));
    row(
        out,
        "memory limit",
        String.format(
            Locale.ROOT,
            "%dMi with -XX:MaxRAMPercentage=%d instead of -Xmx; plus what the application needs",
            reader.containerMemoryBytes() / MIB,
            SizeEstimate.MAX_RAM_PERCENTAGE));
    out.println("reader (memory-mapped mode)");
    row(out, "heap", bytes(reader.mappedHeapBytes()) + " (1 chunk in flight)");
    row(out, "page cache", bytes(reader.mappedPageCacheBytes()) + " (the served file, resident)");
    row(out, "disk", bytes(reader.mappedDiskBytes()) + " (served file + the one being written)");
    out.printf(Locale.ROOT, "cluster (%,d reader pods)%n", c.pods());
    row(out, "reader heap", bytes(c.heapBytes()) + " at the refresh peak");
    row(out, "per refresh", bound + bytes(c.bytesPerRefresh()) + " downloaded");
    row(out, "cold start", bytes(c.bytesPerColdStart()) + " downloaded");
    for (String warning : e.warnings()) {
      out.println("warning: " + warning);
    }
  }

  private static void row(PrintWriter out, String label, String value) {
    out.printf(Locale.ROOT, ROW, label, value);
  }

  private static String bytes(long bytes) {
    return bytes < 1024
        ? String.format(Locale.ROOT, "%,d B", bytes)
        : String.format(Locale.ROOT, "%,d B (%s)", bytes, ByteSizes.human(bytes));
  }
}
