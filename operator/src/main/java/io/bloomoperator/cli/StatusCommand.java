package io.bloomoperator.cli;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.BloomFilterStatus;
import io.bloomoperator.api.BuildAttempt;
import io.bloomoperator.api.Durations;
import io.bloomoperator.api.RebuildRequest;
import io.bloomoperator.api.ResolvedSpec;
import io.bloomoperator.api.SourceSpec;
import io.bloomoperator.snapshot.ReaderReport;
import io.bloomoperator.snapshot.ReaderReports;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.dsl.Resource;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code status}: a BloomFilter's status as a person reads it, from one GET of the resource. */
@Command(
    name = "status",
    description = {
      "Prints a BloomFilter's status: its conditions, the published version, keys, size, the "
          + "last build, the refresh interval and when the next refresh is due, and a pending "
          + "rebuild request.",
      "Then the readers (docs/reader-protocol.md): how many serve the published version, and"
          + " each pod that does not, with the version it serves and why (a failure code, or"
          + " stale: no heartbeat).",
      "Reads the BloomFilter (RBAC: get on bloomfilters) and its reader reports (list on"
          + " leases; without it only the counts are shown); no snapshot is read.",
      "",
      "Example:",
      "  kubectl bloom status product-ids -n shop",
    },
    sortOptions = false)
final class StatusCommand implements Callable<Integer> {

  private static final String FORMAT = "%-16s%s%n";

  @Spec CommandSpec spec;

  @Mixin FilterOnCluster target;

  @Mixin HelpOption help;

  @Override
  public Integer call() throws CliException {
    BloomFilter filter = target.send("reading", Resource::get);
    if (filter == null) {
      throw target.notFound();
    }
    PrintWriter out = spec.commandLine().getOut();
    Instant now = Instant.now();
    print(filter, out, now);
    printReaders(filter, out, now);
    return BloomCli.EXIT_OK;
  }

  /**
   * The pods not on the published version, from their reader reports (one list of Leases by label;
   * RBAC: list on leases). Without that right the rest of the status is still printed.
   */
  private void printReaders(BloomFilter filter, PrintWriter out, Instant now) {
    List<ReaderReport> reports;
    String whyNot = null;
    try {
      reports =
          target.sendWith(
              "listing reader reports of",
              (client, ns) ->
                  client
                      .resources(Lease.class)
                      .inNamespace(ns)
                      .withLabelSelector(ReaderReports.selector(filter.getMetadata().getName()))
                      .list()
                      .getItems()
                      .stream()
                      .map(ReaderReports::parse)
                      .flatMap(Optional::stream)
                      .filter(r -> r.filterName().equals(filter.getMetadata().getName()))
                      .toList());
    } catch (CliException e) {
      reports = null;
      whyNot = e.getMessage();
    }
    ReaderLines.print(filter, reports, whyNot, out, now);
    out.flush();
  }

  /** Writes the summary of {@code filter} as of {@code now}. */
  static void print(BloomFilter filter, PrintWriter out, Instant now) {
    BloomFilterStatus status =
        filter.getStatus() == null ? new BloomFilterStatus() : filter.getStatus();
    line(
        out,
        "BloomFilter:",
        filter.getMetadata().getNamespace() + "/" + filter.getMetadata().getName());
    line(
        out, "Source:", sourceKind(filter.getSpec() == null ? null : filter.getSpec().getSource()));
    Long generation = filter.getMetadata().getGeneration();
    line(
        out,
        "Observed:",
        "generation "
            + orNone(status.getObservedGeneration())
            + (generation != null && !generation.equals(status.getObservedGeneration())
                ? " (spec is at " + generation + ": not reconciled yet)"
                : ""));
    line(out, "Phase:", orNone(status.getPhase()));
    if (status.getConditions() == null || status.getConditions().isEmpty()) {
      line(out, "Conditions:", "none yet (the operator has not reconciled it)");
    } else {
      for (Condition c : status.getConditions()) {
        line(
            out,
            "Condition:",
            c.getType()
                + "="
                + c.getStatus()
                + " "
                + orNone(c.getReason())
                + " since "
                + orNone(c.getLastTransitionTime())
                + (c.getMessage() == null || c.getMessage().isBlank()
                    ? ""
                    : ": " + c.getMessage()));
      }
    }
    if (status.getVersion() == null) {
      line(out, "Version:", "none published");
    } else {
      String chain =
          status.getDeltas() != null && status.getDeltas() > 0
              ? " (delta "
                  + status.getDeltas()
                  + " on base version "
                  + status.getBaseVersion()
                  + ")"
              : "";
      line(
          out,
          "Version:",
          status.getVersion() + chain + ", manifest " + orNone(status.getManifest()));
      line(
          out,
          "Keys:",
          orNone(status.getKeys())
              + (status.getExpectedFpp() == null
                  ? ""
                  : ", expected false-positive rate "
                      + String.format(Locale.ROOT, "%.3g", status.getExpectedFpp())));
      line(
          out,
          "Size:",
          orNone(status.getSize())
              + " ("
              + orNone(status.getSizeBytes())
              + " bytes) in "
              + orNone(status.getChunks())
              + " chunk(s)");
    }
    line(
        out,
        "Last build:",
        status.getLastBuildTime() == null
            ? "none"
            : status.getLastBuildTime()
                + (status.getLastBuildDurationMillis() == null
                    ? ""
                    : ", took " + status.getLastBuildDurationMillis() + " ms"));
    BuildAttempt attempt = status.getBuildAttempt();
    if (attempt != null && attempt.getRetryAfter() != null) {
      line(
          out,
          "Build retry:",
          "after "
              + attempt.getRetryAfter()
              + " (the operator died during "
              + orNone(attempt.getCrashes())
              + " build(s))");
    }
    Duration refresh = refreshInterval(filter);
    if (refresh == null) {
      line(out, "Refresh:", "none: inline keys change with the resource");
    } else {
      line(out, "Refresh:", "every " + Durations.format(refresh));
      line(out, "Next refresh:", nextRefresh(status.getLastBuildTime(), refresh, now));
    }
    String requested = RebuildRequest.of(filter);
    if (requested != null) {
      line(
          out,
          "Rebuild:",
          RebuildRequest.pending(filter)
              ? "requested (" + requested + "), not acted on yet"
              : "last request (" + requested + ") acted on");
    }
    stream(out, status);
    rollout(out, status);
    out.flush();
  }

  /** Where the change stream stands (status.stream, spec.changes). */
  private static void stream(PrintWriter out, BloomFilterStatus status) {
    io.bloomoperator.api.StreamStatus stream = status.getStream();
    if (stream == null) {
      return;
    }
    if (stream.getMessage() != null) {
      line(out, "Stream:", "not read: " + stream.getMessage());
    } else {
      line(
          out,
          "Stream:",
          "at "
              + orNone(stream.getPosition())
              + (stream.getLag() == null ? "" : ", " + stream.getLag() + " events behind")
              + (stream.getLastDeltaAt() == null
                  ? ", no delta yet"
                  : ", last delta " + stream.getLastDeltaAt()));
    }
    if (stream.getAddsApplied() != null || stream.getDeletionsPending() != null) {
      line(
          out,
          "Since build:",
          orZero(stream.getAddsApplied())
              + " adds published, "
              + orZero(stream.getDeletionsPending())
              + " deletes pending the next full build, "
              + orZero(stream.getMalformedEvents())
              + " malformed events");
    }
    if (stream.getDeletions() != null) {
      // deletions: Counting only: whether deletes go out in deltas now, and how many did.
      line(
          out,
          "Deletions:",
          stream.getDeletions()
              + (stream.getDeletionsApplied() == null
                  ? ""
                  : ", " + stream.getDeletionsApplied() + " published by deltas since build"));
    }
  }

  private static long orZero(Long value) {
    return value == null ? 0 : value;
  }

  /** What the rollout controls hold, pin and retain (spec.rollout, spec.snapshot.keepVersions). */
  private static void rollout(PrintWriter out, BloomFilterStatus status) {
    if (status.getHeld() != null) {
      line(
          out,
          "Held:",
          status.getHeld().getKeys()
              + " keys built "
              + orNone(status.getHeld().getBuiltAt())
              + " ("
              + status.getHeld().getReason()
              + ")");
    }
    if (status.getPinnedVersion() != null) {
      line(out, "Pinned:", "serving the payload of version " + status.getPinnedVersion());
    }
    if (status.getRetainedVersions() != null && !status.getRetainedVersions().isEmpty()) {
      line(
          out,
          "Retained:",
          status.getRetainedVersions().stream()
              .map(r -> r.getVersion() + " (" + r.getKeys() + " keys)")
              .collect(Collectors.joining(", ")));
    }
  }

  /**
   * When the next check is due. A source that cannot tell whether it changed is rebuilt one
   * interval after its last build; one that can is checked every interval, which leaves no time in
   * the status while it is unchanged.
   */
  private static String nextRefresh(String lastBuildTime, Duration refresh, Instant now) {
    Instant lastBuild = parse(lastBuildTime);
    if (lastBuild == null) {
      return "within " + Durations.format(refresh) + " of the next reconcile";
    }
    Instant due = lastBuild.plus(refresh);
    if (due.isAfter(now)) {
      return "by " + due + " (last build + " + Durations.format(refresh) + ")";
    }
    return "at most "
        + Durations.format(refresh)
        + " after the operator's last check (an unchanged source is not rebuilt)";
  }

  /** The interval the operator uses: the spec's, the default for outside sources, or none. */
  private static Duration refreshInterval(BloomFilter filter) {
    if (filter.getSpec() == null) {
      return null;
    }
    if (filter.getSpec().getRefreshInterval() != null) {
      try {
        return Durations.parse(filter.getSpec().getRefreshInterval());
      } catch (IllegalArgumentException e) {
        return null;
      }
    }
    SourceSpec source = filter.getSpec().getSource();
    return source != null && source.getInline() == null ? ResolvedSpec.DEFAULT_SOURCE_CHECK : null;
  }

  private static String sourceKind(SourceSpec source) {
    if (source == null) {
      return "none";
    }
    if (source.getInline() != null) {
      return "inline (" + source.getInline().size() + " keys)";
    }
    if (source.getConfigMap() != null) {
      return "ConfigMap " + source.getConfigMap().getName();
    }
    if (source.getSecret() != null) {
      return "Secret " + source.getSecret().getName();
    }
    if (source.getHttp() != null) {
      return "HTTP";
    }
    return source.getJdbc() != null ? "JDBC" : "unknown";
  }

  private static Instant parse(String time) {
    try {
      return time == null ? null : Instant.parse(time);
    } catch (DateTimeParseException e) {
      return null;
    }
  }

  private static String orNone(Object value) {
    return value == null ? "-" : value.toString();
  }

  private static void line(PrintWriter out, String label, String value) {
    out.printf(FORMAT, label, value);
  }
}
