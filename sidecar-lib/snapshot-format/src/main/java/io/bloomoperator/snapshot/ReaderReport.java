package io.bloomoperator.snapshot;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * What one reader (one pod) says it serves of one filter: the content of its reader report, see
 * {@link ReaderReports} for how it is stored. Holds codes, numbers and Kubernetes names only, never
 * text from a manifest or an exception.
 *
 * @param namespace the pod's namespace, which is also the filter's and the report's
 * @param podName the pod's name
 * @param podUid the pod's UID (the report's owner)
 * @param filterName the BloomFilter read
 * @param servedVersion the version served, or {@link #NONE} before the first load
 * @param failingVersion a newer version the reader fails to load, or {@link #NONE}
 * @param failingReason why it fails to load {@code failingVersion}; null when {@code
 *     failingVersion} is {@link #NONE}
 * @param loadedAt when the served version was loaded; null before the first load
 * @param renewedAt the last heartbeat (or write)
 * @param staleAfter how long after {@code renewedAt} the reader counts as gone silent
 */
public record ReaderReport(
    String namespace,
    String podName,
    String podUid,
    String filterName,
    long servedVersion,
    long failingVersion,
    LoadFailureReason failingReason,
    Instant loadedAt,
    Instant renewedAt,
    Duration staleAfter) {

  /** The version number of "none": before the first load, or nothing failing. */
  public static final long NONE = 0;

  public ReaderReport {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(podName, "podName");
    Objects.requireNonNull(podUid, "podUid");
    Objects.requireNonNull(filterName, "filterName");
    Objects.requireNonNull(renewedAt, "renewedAt");
    Objects.requireNonNull(staleAfter, "staleAfter");
    if (servedVersion < 0 || failingVersion < 0) {
      throw new IllegalArgumentException("versions are not negative");
    }
    if ((failingVersion == NONE) != (failingReason == null)) {
      throw new IllegalArgumentException("a failing version needs a reason, and only one does");
    }
  }

  /** Whether the reader fails to load a version newer than the one it serves. */
  public boolean failing() {
    return failingVersion != NONE;
  }

  /** Whether no heartbeat arrived within {@link #staleAfter()} before {@code now}. */
  public boolean staleAt(Instant now) {
    return renewedAt.plus(staleAfter).isBefore(now);
  }

  /** This report with a new heartbeat time. */
  public ReaderReport renewed(Instant at) {
    return new ReaderReport(
        namespace,
        podName,
        podUid,
        filterName,
        servedVersion,
        failingVersion,
        failingReason,
        loadedAt,
        at,
        staleAfter);
  }
}
