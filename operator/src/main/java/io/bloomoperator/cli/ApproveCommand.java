package io.bloomoperator.cli;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.HeldBuild;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.rollout.RolloutGate;
import java.io.PrintWriter;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code approve}: releases a build held because its key count dropped ({@link
 * Reasons#KEY_COUNT_DROPPED}), by naming its sha256 in the annotation {@value
 * RolloutGate#APPROVE_ANNOTATION}.
 */
@Command(
    name = "approve",
    description = {
      "Publishes a build the operator held because its key count dropped more than"
          + " spec.rollout.maxKeyCountDropPercent (reason "
          + Reasons.KEY_COUNT_DROPPED
          + "): sets the annotation "
          + RolloutGate.APPROVE_ANNOTATION
          + " to status.held.sha256 (RBAC: get and patch on bloomfilters). The operator builds"
          + " again and publishes only if the build has exactly that content; a different one is"
          + " judged anew.",
      "",
      "Example:",
      "  kubectl bloom approve product-ids -n shop",
    },
    sortOptions = false)
final class ApproveCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin FilterOnCluster target;

  @Mixin HelpOption help;

  @Override
  public Integer call() throws CliException {
    BloomFilter filter = target.send("reading", f -> f.get());
    if (filter == null) {
      throw target.notFound();
    }
    HeldBuild held = filter.getStatus() == null ? null : filter.getStatus().getHeld();
    if (held == null || !Reasons.KEY_COUNT_DROPPED.equals(held.getReason())) {
      throw new CliException(
          "BloomFilter "
              + target.qualifiedName()
              + " holds no build for approval"
              + (held == null ? "" : " (held: " + held.getReason() + ")"));
    }
    target.mergePatch(
        "approving",
        Map.of(
            "metadata",
            Map.of("annotations", Map.of(RolloutGate.APPROVE_ANNOTATION, held.getSha256()))));
    PrintWriter out = spec.commandLine().getOut();
    out.println(
        "approved: "
            + target.qualifiedName()
            + " build of "
            + held.getKeys()
            + " keys (was "
            + held.getPublishedKeys()
            + "), sha256 "
            + held.getSha256());
    out.flush();
    return BloomCli.EXIT_OK;
  }
}
