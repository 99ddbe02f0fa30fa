package io.bloomoperator.cli;

import io.bloomoperator.rollout.Canaries;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code promote}: publishes the running canary to every reader now. */
@Command(
    name = "promote",
    description = {
      "Publishes the running canary (spec.rollout.canary, status.canary) to every reader now,"
          + " without waiting for its hold time: sets the annotation "
          + Canaries.PROMOTE_ANNOTATION
          + " to status.canary.version (RBAC: get and patch on bloomfilters). It acts on exactly"
          + " that canary; a later one is judged anew.",
      "",
      "Example:",
      "  kubectl bloom promote product-ids -n shop",
    },
    sortOptions = false)
final class PromoteCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin FilterOnCluster target;

  @Mixin HelpOption help;

  @Override
  public Integer call() throws CliException {
    CanaryCommand.request(
        target, Canaries.PROMOTE_ANNOTATION, "promotion", spec.commandLine().getOut());
    return BloomCli.EXIT_OK;
  }
}
