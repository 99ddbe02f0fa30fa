package io.bloomoperator.cli;

import io.bloomoperator.rollout.Canaries;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code abort}: withdraws the running canary; every reader serves the stable version. */
@Command(
    name = "abort",
    description = {
      "Withdraws the running canary (spec.rollout.canary, status.canary): every reader serves the"
          + " stable version again (if readers of the share already loaded the canary, the stable"
          + " payload is published again as a new version, so they come back), and a build of the"
          + " same content is held until the source changes. Sets the annotation "
          + Canaries.ABORT_ANNOTATION
          + " to status.canary.version (RBAC: get and patch on bloomfilters).",
      "",
      "Example:",
      "  kubectl bloom abort product-ids -n shop",
    },
    sortOptions = false)
final class AbortCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin FilterOnCluster target;

  @Mixin HelpOption help;

  @Override
  public Integer call() throws CliException {
    CanaryCommand.request(target, Canaries.ABORT_ANNOTATION, "abort", spec.commandLine().getOut());
    return BloomCli.EXIT_OK;
  }
}
