package io.bloomoperator.cli;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.CanaryStatus;
import java.io.PrintWriter;
import java.util.Map;

/**
 * What {@code promote} and {@code abort} share: find the running canary in {@code status.canary}
 * and name its version in an annotation, so the request acts on exactly that canary and never on a
 * later one.
 */
final class CanaryCommand {

  private CanaryCommand() {}

  /**
   * Sets {@code annotation} to the running canary's version.
   *
   * @param verb what the request does, for the output, e.g. "promotion"
   * @throws CliException when the filter is missing or runs no canary
   */
  static CanaryStatus request(
      FilterOnCluster target, String annotation, String verb, PrintWriter out) throws CliException {
    BloomFilter filter = target.send("reading", f -> f.get());
    if (filter == null) {
      throw target.notFound();
    }
    CanaryStatus canary = filter.getStatus() == null ? null : filter.getStatus().getCanary();
    if (canary == null
        || !CanaryStatus.RUNNING.equals(canary.getState())
        || canary.getVersion() == null) {
      throw new CliException(
          "BloomFilter "
              + target.qualifiedName()
              + " runs no canary"
              + (canary == null || canary.getState() == null
                  ? ""
                  : " (last canary: version "
                      + canary.getVersion()
                      + ", "
                      + canary.getState()
                      + ")"));
    }
    target.mergePatch(
        "requesting " + verb,
        Map.of(
            "metadata",
            Map.of("annotations", Map.of(annotation, Long.toString(canary.getVersion())))));
    out.println(
        verb
            + " requested: "
            + target.qualifiedName()
            + " canary version "
            + canary.getVersion()
            + " ("
            + canary.getKeys()
            + " keys, served by "
            + canary.getOnCanary()
            + "/"
            + canary.getReaders()
            + " readers of its "
            + canary.getPercent()
            + " % share)");
    out.flush();
    return canary;
  }
}
