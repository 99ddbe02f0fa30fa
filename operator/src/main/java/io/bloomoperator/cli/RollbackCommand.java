package io.bloomoperator.cli;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.BloomFilterStatus;
import io.bloomoperator.api.RetainedVersion;
import java.io.PrintWriter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code rollback}: serves a retained version again without a rebuild, by setting {@code
 * spec.rollout.pinVersion}; {@code --release} removes the pin.
 */
@Command(
    name = "rollback",
    description = {
      "Serves a retained version of a BloomFilter again, without a rebuild: sets"
          + " spec.rollout.pinVersion (one merge patch; RBAC: get and patch on bloomfilters). The"
          + " operator publishes that version's payload under a new version number, reusing its"
          + " chunks, and readers load it within seconds. New builds are held (status.held) until"
          + " the pin is released.",
      "Versions are retained only with spec.snapshot.keepVersions > 0; 'status' and"
          + " status.retainedVersions list them. Without --to: the newest retained version whose"
          + " content differs from what is served.",
      "",
      "Examples:",
      "  kubectl bloom rollback product-ids -n shop",
      "  kubectl bloom rollback product-ids -n shop --to 41",
      "  kubectl bloom rollback product-ids -n shop --release   # publish the source again",
    },
    sortOptions = false)
final class RollbackCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin FilterOnCluster target;

  @Option(
      names = "--to",
      paramLabel = "<version>",
      description = "The retained version to serve (default: the newest one that differs).")
  Long to;

  @Option(
      names = "--release",
      description = "Remove the pin: the operator builds from the source and publishes again.")
  boolean release;

  @Mixin HelpOption help;

  @Override
  public Integer call() throws CliException {
    if (release && to != null) {
      throw new CliException("--to and --release exclude each other");
    }
    PrintWriter out = spec.commandLine().getOut();
    if (release) {
      patchPin(null);
      out.println(
          "pin released: "
              + target.qualifiedName()
              + " publishes from its source again (held builds are rebuilt)");
      out.flush();
      return BloomCli.EXIT_OK;
    }
    BloomFilter filter = target.send("reading", f -> f.get());
    if (filter == null) {
      throw target.notFound();
    }
    long version = choose(filter.getStatus());
    patchPin(version);
    out.println(
        "rollback requested: "
            + target.qualifiedName()
            + " spec.rollout.pinVersion="
            + version
            + "; new builds are held until `rollback "
            + target.name
            + " --release`");
    out.flush();
    return BloomCli.EXIT_OK;
  }

  /** {@code --to} if it is retained, else the newest retained version that differs. */
  private long choose(BloomFilterStatus status) throws CliException {
    List<RetainedVersion> retained =
        status == null || status.getRetainedVersions() == null
            ? List.of()
            : status.getRetainedVersions();
    if (retained.isEmpty()) {
      throw new CliException(
          "BloomFilter "
              + target.qualifiedName()
              + " retains no version (set spec.snapshot.keepVersions to keep some)");
    }
    if (to != null) {
      if (retained.stream().noneMatch(r -> to.equals(r.getVersion()))) {
        throw new CliException(
            "version "
                + to
                + " is not retained; retained: "
                + retained.stream().map(r -> String.valueOf(r.getVersion())).toList());
      }
      return to;
    }
    return retained.stream()
        .filter(r -> !Objects.equals(r.getSha256(), status.getSha256()))
        .map(RetainedVersion::getVersion)
        .findFirst()
        .orElseThrow(
            () ->
                new CliException(
                    "every retained version of "
                        + target.qualifiedName()
                        + " serves the same content as the published one"));
  }

  private void patchPin(Long version) throws CliException {
    // Only this field: the rest of spec.rollout stays as it is; null removes it.
    Map<String, Object> rollout = new HashMap<>();
    rollout.put("pinVersion", version);
    target.mergePatch("pinning", Map.of("spec", Map.of("rollout", rollout)));
  }
}
