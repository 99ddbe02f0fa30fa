package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Messages quote manifest content written by whoever may write ConfigMaps: they reach logs only
 * without control characters and cut to a bounded length.
 */
class SnapshotVerificationExceptionTest {

  @Test
  void controlCharactersBecomeQuestionMarks() {
    assertThat(new SnapshotVerificationException("a\nb\u0000c\td").getMessage())
        .isEqualTo("a?b?c?d");
    assertThat(new SnapshotVerificationException("x", 3).chunkIndex()).isEqualTo(3);
    assertThat(new SnapshotVerificationException("x").chunkIndex()).isEqualTo(-1);
    assertThat(new SnapshotVerificationException(null).getMessage()).isNull();
  }

  @Test
  void messagesAreCutAtTheLimit() {
    int max = SnapshotVerificationException.MAX_MESSAGE_CHARS;
    String exactly = "m".repeat(max);
    assertThat(new SnapshotVerificationException(exactly).getMessage()).isEqualTo(exactly);
    assertThat(new SnapshotVerificationException(exactly + "x").getMessage())
        .isEqualTo(exactly + "... (cut)");
  }
}
