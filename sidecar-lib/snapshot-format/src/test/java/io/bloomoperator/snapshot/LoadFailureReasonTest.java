package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/** The one list of reasons: what a reader counts and tags, and which ones are refusals. */
class LoadFailureReasonTest {

  @Test
  void eachExceptionMapsToItsReason() {
    for (LoadFailureReason reason : LoadFailureReason.values()) {
      if (reason.isRefusal()) {
        assertThat(LoadFailureReason.of(new SnapshotRefusedException(reason, "x")))
            .isEqualTo(reason);
      }
    }
    assertThat(LoadFailureReason.of(new SnapshotVerificationException("digest")))
        .isEqualTo(LoadFailureReason.VERIFICATION);
    assertThat(LoadFailureReason.of(new IOException("short chunk")))
        .isEqualTo(LoadFailureReason.CHUNK);
    assertThat(LoadFailureReason.of(new IOException("heap", new OutOfMemoryError())))
        .isEqualTo(LoadFailureReason.HEAP);
    assertThat(LoadFailureReason.of(new IOException("other", new IllegalStateException())))
        .isEqualTo(LoadFailureReason.CHUNK);
    assertThat(
            LoadFailureReason.of(
                new ObjectStoreException(LoadFailureReason.STORE_DENIED, "403", null)))
        .isEqualTo(LoadFailureReason.STORE_DENIED);
    assertThat(
            LoadFailureReason.of(
                new ObjectStoreException(LoadFailureReason.STORE_UNAVAILABLE, "down", null)))
        .isEqualTo(LoadFailureReason.STORE_UNAVAILABLE);
    assertThatThrownBy(
            () -> new ObjectStoreException(LoadFailureReason.CHUNK, "not a store failure", null))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(LoadFailureReason.of(new IllegalStateException("api server")))
        .isEqualTo(LoadFailureReason.API);
  }

  @Test
  void theRefusalsAreExactlyTheManifestChecks() {
    EnumSet<LoadFailureReason> refusals = EnumSet.noneOf(LoadFailureReason.class);
    for (LoadFailureReason reason : LoadFailureReason.values()) {
      if (reason.isRefusal()) {
        refusals.add(reason);
      }
    }
    assertThat(refusals)
        .containsExactlyInAnyOrder(
            LoadFailureReason.TOO_LARGE,
            LoadFailureReason.WRONG_FILTER,
            LoadFailureReason.FOREIGN_CHUNK,
            LoadFailureReason.UNSIGNED,
            LoadFailureReason.UNTRUSTED_KEY,
            LoadFailureReason.BAD_SIGNATURE,
            LoadFailureReason.ROLLBACK,
            LoadFailureReason.TOO_OLD,
            LoadFailureReason.UNKNOWN_STORE);
    assertThatThrownBy(() -> new SnapshotRefusedException(LoadFailureReason.API, "x"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void tagValuesAreTheMetricsLabels() {
    // Dashboards and alerts select on these: renaming a constant must fail here.
    assertThat(LoadFailureReason.BAD_SIGNATURE.tagValue()).isEqualTo("bad_signature");
    assertThat(LoadFailureReason.TOO_OLD.tagValue()).isEqualTo("too_old");
    assertThat(LoadFailureReason.API.tagValue()).isEqualTo("api");
  }
}
