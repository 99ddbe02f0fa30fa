package io.bloomoperator.snapshot;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpec;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The reader-report protocol (docs/reader-protocol.md): how a reader tells which version of a
 * filter its pod serves, as a {@code coordination.k8s.io/v1} Lease, and how the operator reads it
 * back. The one place of its names and rules, used by both sides.
 *
 * <p>One Lease per pod and filter, in the pod's (= the filter's) namespace, named {@link
 * SnapshotNames#readerReportName}, owned by the Pod (so it goes away with it):
 *
 * <ul>
 *   <li>labels {@value #LABEL_ROLE_VALUE} under {@link SnapshotNames#LABEL_ROLE}, and {@link
 *       SnapshotNames#LABEL_FILTER}: what the operator selects on
 *   <li>annotations {@value #ANNOTATION_FILTER}, {@value #ANNOTATION_SERVED}, {@value
 *       #ANNOTATION_FAILING_VERSION}, {@value #ANNOTATION_FAILING_REASON}
 *   <li>{@code spec.holderIdentity}: the pod name; {@code spec.acquireTime}: when the served
 *       version was loaded; {@code spec.renewTime}: the heartbeat; {@code
 *       spec.leaseDurationSeconds}: how long after the heartbeat the reader counts as silent
 * </ul>
 *
 * <p>Reading is strict because anyone who may create Leases in a namespace can write one: a report
 * whose name, owner, filter, numbers or reason do not follow the protocol exactly is not a report.
 */
public final class ReaderReports {

  /** Value of {@link SnapshotNames#LABEL_ROLE} on a reader report. */
  public static final String LABEL_ROLE_VALUE = "reader-report";

  /** The filter's full name (the label may be cut, see {@link SnapshotNames#filterLabelValue}). */
  public static final String ANNOTATION_FILTER = "bloomoperator.io/filter";

  /** The version served, decimal; absent before the first load. */
  public static final String ANNOTATION_SERVED = "bloomoperator.io/served-version";

  /** A newer version the reader fails to load, decimal; absent when none fails. */
  public static final String ANNOTATION_FAILING_VERSION = "bloomoperator.io/failing-version";

  /** Why, as a {@link LoadFailureReason} constant name; present with the failing version only. */
  public static final String ANNOTATION_FAILING_REASON = "bloomoperator.io/failing-reason";

  /** Label selector of every reader report. */
  public static final String SELECTOR = SnapshotNames.LABEL_ROLE + "=" + LABEL_ROLE_VALUE;

  /** Bounds of {@code spec.leaseDurationSeconds}: a report outside them is not one. */
  public static final Duration MIN_STALE_AFTER = Duration.ofSeconds(1);

  public static final Duration MAX_STALE_AFTER = Duration.ofHours(1);

  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern UID = Pattern.compile("[0-9a-fA-F-]{1,36}");

  private ReaderReports() {}

  /** Label selector of the reports about one filter. */
  public static String selector(String filterName) {
    return SELECTOR
        + ","
        + SnapshotNames.LABEL_FILTER
        + "="
        + SnapshotNames.filterLabelValue(filterName);
  }

  /** The Lease that carries {@code report}, without a resourceVersion. */
  public static Lease toLease(ReaderReport report) {
    Map<String, String> annotations = new java.util.HashMap<>();
    annotations.put(ANNOTATION_FILTER, report.filterName());
    if (report.servedVersion() != ReaderReport.NONE) {
      annotations.put(ANNOTATION_SERVED, Long.toString(report.servedVersion()));
    }
    if (report.failing()) {
      annotations.put(ANNOTATION_FAILING_VERSION, Long.toString(report.failingVersion()));
      annotations.put(ANNOTATION_FAILING_REASON, report.failingReason().name());
    }
    return new LeaseBuilder()
        .withNewMetadata()
        .withName(SnapshotNames.readerReportName(report.filterName(), report.podUid()))
        .withNamespace(report.namespace())
        .withLabels(
            Map.of(
                SnapshotNames.LABEL_ROLE,
                LABEL_ROLE_VALUE,
                SnapshotNames.LABEL_FILTER,
                SnapshotNames.filterLabelValue(report.filterName())))
        .withAnnotations(annotations)
        .withOwnerReferences(
            new OwnerReferenceBuilder()
                .withApiVersion("v1")
                .withKind("Pod")
                .withName(report.podName())
                .withUid(report.podUid())
                .build())
        .endMetadata()
        .withNewSpec()
        .withHolderIdentity(report.podName())
        .withLeaseDurationSeconds((int) report.staleAfter().toSeconds())
        .withAcquireTime(time(report.loadedAt()))
        .withRenewTime(time(report.renewedAt()))
        .endSpec()
        .build();
  }

  /**
   * The report a Lease carries, or empty if it does not follow the protocol (not a report, or a
   * forged or garbled one). Says nothing about whether its pod exists: that is for the caller.
   */
  public static Optional<ReaderReport> parse(Lease lease) {
    try {
      return Optional.ofNullable(parseOrNull(lease));
    } catch (RuntimeException e) {
      return Optional.empty(); // any malformed part: not a report
    }
  }

  private static ReaderReport parseOrNull(Lease lease) {
    var metadata = lease.getMetadata();
    LeaseSpec spec = lease.getSpec();
    if (metadata == null || spec == null || metadata.getLabels() == null) {
      return null;
    }
    Map<String, String> annotations =
        metadata.getAnnotations() == null ? Map.of() : metadata.getAnnotations();
    String filter = annotations.get(ANNOTATION_FILTER);
    if (!LABEL_ROLE_VALUE.equals(metadata.getLabels().get(SnapshotNames.LABEL_ROLE))
        || !isName(filter)
        || !SnapshotNames.filterLabelValue(filter)
            .equals(metadata.getLabels().get(SnapshotNames.LABEL_FILTER))) {
      return null;
    }
    List<OwnerReference> owners = metadata.getOwnerReferences();
    if (owners == null || owners.size() != 1) {
      return null;
    }
    OwnerReference pod = owners.get(0);
    String podName = spec.getHolderIdentity();
    if (!"v1".equals(pod.getApiVersion())
        || !"Pod".equals(pod.getKind())
        || pod.getUid() == null
        || !UID.matcher(pod.getUid()).matches()
        || !isName(podName)
        || !podName.equals(pod.getName())
        || !SnapshotNames.readerReportName(filter, pod.getUid()).equals(metadata.getName())) {
      return null;
    }
    Integer seconds = spec.getLeaseDurationSeconds();
    if (seconds == null
        || seconds < MIN_STALE_AFTER.toSeconds()
        || seconds > MAX_STALE_AFTER.toSeconds()
        || spec.getRenewTime() == null) {
      return null;
    }
    long served = version(annotations.get(ANNOTATION_SERVED));
    long failing = version(annotations.get(ANNOTATION_FAILING_VERSION));
    String reasonText = annotations.get(ANNOTATION_FAILING_REASON);
    LoadFailureReason reason = reasonText == null ? null : LoadFailureReason.valueOf(reasonText);
    if ((failing == ReaderReport.NONE) != (reason == null)) {
      return null;
    }
    return new ReaderReport(
        metadata.getNamespace(),
        podName,
        pod.getUid(),
        filter,
        served,
        failing,
        reason,
        spec.getAcquireTime() == null ? null : spec.getAcquireTime().toInstant(),
        spec.getRenewTime().toInstant(),
        Duration.ofSeconds(seconds));
  }

  private static boolean isName(String value) {
    return value != null
        && value.length() <= SnapshotNames.MAX_NAME_LENGTH
        && DNS_SUBDOMAIN.matcher(value).matches();
  }

  /** A decimal version, {@link ReaderReport#NONE} when absent; throws when malformed. */
  private static long version(String text) {
    if (text == null) {
      return ReaderReport.NONE;
    }
    return SnapshotVersions.parse(text)
        .orElseThrow(() -> new IllegalArgumentException("not a version"));
  }

  private static ZonedDateTime time(Instant instant) {
    // MicroTime: the API server keeps microseconds; more digits would not round-trip.
    return instant == null ? null : instant.truncatedTo(ChronoUnit.MICROS).atZone(ZoneOffset.UTC);
  }
}
