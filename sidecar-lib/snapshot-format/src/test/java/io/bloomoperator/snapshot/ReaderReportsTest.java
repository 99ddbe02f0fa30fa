package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** The reader-report protocol both sides share: what is written reads back; nothing else does. */
class ReaderReportsTest {

  private static final Instant NOW = Instant.parse("2026-12-01T12:00:00.123456Z");
  private static final String UID = "0f6d1c2e-6a7b-4c3d-9e8f-112233445566";

  private static ReaderReport report(long served, long failing, LoadFailureReason reason) {
    return new ReaderReport(
        "shop", "app-0", UID, "ids", served, failing, reason, NOW, NOW, Duration.ofSeconds(180));
  }

  private static Lease written(Consumer<Lease> change) {
    Lease lease = ReaderReports.toLease(report(7, 8, LoadFailureReason.CHUNK));
    lease.getMetadata().setAnnotations(new HashMap<>(lease.getMetadata().getAnnotations()));
    lease.getMetadata().setLabels(new HashMap<>(lease.getMetadata().getLabels()));
    change.accept(lease);
    return lease;
  }

  @Test
  void whatIsWrittenReadsBack() {
    ReaderReport failing = report(7, 8, LoadFailureReason.CHUNK);
    assertThat(ReaderReports.parse(ReaderReports.toLease(failing))).contains(failing);
    ReaderReport fresh = report(ReaderReport.NONE, ReaderReport.NONE, null);
    assertThat(ReaderReports.parse(ReaderReports.toLease(fresh))).contains(fresh);
    Lease lease = ReaderReports.toLease(failing);
    assertThat(lease.getMetadata().getName()).isEqualTo(SnapshotNames.readerReportName("ids", UID));
    assertThat(lease.getMetadata().getName()).startsWith("ids-bloom-ack-");
    assertThat(ReaderReports.selector("ids"))
        .isEqualTo("bloomoperator.io/role=reader-report,bloomoperator.io/filter=ids");
  }

  @Test
  void versionsAreReadInTheOneRangeAtBothEnds() {
    long max = SnapshotVersions.MAX;
    ReaderReport atMax = report(max, max, LoadFailureReason.CHUNK);
    assertThat(ReaderReports.parse(ReaderReports.toLease(atMax))).contains(atMax);
    for (String refused : List.of(Long.toString(max + 1), "2000000000000000000", "0")) {
      for (String annotation :
          List.of(ReaderReports.ANNOTATION_SERVED, ReaderReports.ANNOTATION_FAILING_VERSION)) {
        Lease lease = written(l -> l.getMetadata().getAnnotations().put(annotation, refused));
        assertThat(ReaderReports.parse(lease)).as("%s %s", annotation, refused).isEmpty();
      }
    }
  }

  @Test
  void aLeaseOffTheProtocolIsNotAReport() {
    List<Consumer<Lease>> forgeries =
        List.of(
            l -> l.getMetadata().getAnnotations().put(ReaderReports.ANNOTATION_SERVED, "7 "),
            l -> l.getMetadata().getAnnotations().put(ReaderReports.ANNOTATION_SERVED, "-7"),
            l ->
                l.getMetadata()
                    .getAnnotations()
                    .put(ReaderReports.ANNOTATION_SERVED, "9".repeat(19)),
            l ->
                l.getMetadata()
                    .getAnnotations()
                    .put(ReaderReports.ANNOTATION_FAILING_REASON, "see http://x"),
            l -> l.getMetadata().getAnnotations().remove(ReaderReports.ANNOTATION_FAILING_REASON),
            l -> l.getMetadata().getAnnotations().put(ReaderReports.ANNOTATION_FILTER, "other"),
            l -> l.getMetadata().getAnnotations().put(ReaderReports.ANNOTATION_FILTER, "A b"),
            l -> l.getMetadata().getLabels().remove(SnapshotNames.LABEL_ROLE),
            l -> l.getMetadata().setName("ids-bloom-ack-second"),
            l -> l.getMetadata().setOwnerReferences(List.of()),
            l ->
                l.getMetadata()
                    .setOwnerReferences(
                        List.of(
                            l.getMetadata().getOwnerReferences().get(0),
                            new OwnerReferenceBuilder()
                                .withApiVersion("v1")
                                .withKind("Pod")
                                .withName("b")
                                .withUid("1")
                                .build())),
            l -> l.getMetadata().getOwnerReferences().get(0).setKind("Node"),
            l -> l.getMetadata().getOwnerReferences().get(0).setName("app-1"),
            l -> l.getSpec().setHolderIdentity("app-1"),
            l -> l.getSpec().setLeaseDurationSeconds(0),
            l -> l.getSpec().setLeaseDurationSeconds(86_400),
            l -> l.getSpec().setRenewTime(null));
    for (int i = 0; i < forgeries.size(); i++) {
      assertThat(ReaderReports.parse(written(forgeries.get(i)))).as("forgery %d", i).isEmpty();
    }
    assertThat(ReaderReports.parse(written(l -> {}))).isPresent();
  }

  @Test
  void staleAfterTheDeclaredBound() {
    ReaderReport r = report(7, ReaderReport.NONE, null);
    assertThat(r.staleAt(NOW.plusSeconds(180))).isFalse();
    assertThat(r.staleAt(NOW.plusSeconds(181))).isTrue();
  }
}
