package io.bloomoperator.cli;

import io.bloomoperator.api.RebuildRequest;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code rebuild}: asks the operator to rebuild a BloomFilter from its source now, the way the
 * operator supports it: a new value of the annotation {@value RebuildRequest#ANNOTATION}.
 */
@Command(
    name = "rebuild",
    description = {
      "Asks the operator to rebuild a BloomFilter from its source now, even when the source "
          + "reports no change: sets the annotation "
          + RebuildRequest.ANNOTATION
          + " to the current time (one merge patch; RBAC: patch on bloomfilters). The operator "
          + "acts on each new value once and records it in status.rebuildRequest; it still "
          + "waits out BLOOM_MIN_PUBLISH_INTERVAL after the last publish, and publishes a new "
          + "version only when the keys changed.",
      "'status' shows whether the request was acted on.",
      "",
      "Example:",
      "  kubectl bloom rebuild product-ids -n shop",
    },
    sortOptions = false)
final class RebuildCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin FilterOnCluster target;

  @Mixin HelpOption help;

  @Override
  public Integer call() throws CliException {
    String value = Instant.now().toString();
    // A missing BloomFilter answers 404.
    target.mergePatch(
        "requesting a rebuild of",
        Map.of("metadata", Map.of("annotations", Map.of(RebuildRequest.ANNOTATION, value))));
    PrintWriter out = spec.commandLine().getOut();
    out.println(
        "rebuild requested: "
            + target.qualifiedName()
            + " "
            + RebuildRequest.ANNOTATION
            + "="
            + value);
    out.flush();
    return BloomCli.EXIT_OK;
  }
}
