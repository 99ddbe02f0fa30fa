package io.bloomoperator.publish;

/**
 * Whether this operator replica may still change a published snapshot, asked right before the
 * writes that could harm versions another replica publishes: the janitor's deletes and the manifest
 * write. With leader election, a replica that was frozen (a stop-the-world pause, a stopped VM or
 * node) resumes in the middle of its reconcile without knowing that another replica took the Lease
 * meanwhile: java-operator-sdk has no fencing, its leader elector notices only at its next renewal
 * and then exits, after letting reconciles under way finish. The check leaves a window between
 * itself and the write; the manifest's resourceVersion precondition and the chunk deletes'
 * preconditions keep that window from tearing a published version.
 */
@FunctionalInterface
public interface WriteFence {

  /** Without leader election: one replica, always allowed. */
  WriteFence NONE = () -> {};

  /**
   * @throws NotLeaderException if this replica must not write
   */
  void check();

  /** This replica no longer holds (or cannot confirm that it holds) the leader Lease. */
  final class NotLeaderException extends RuntimeException {
    public NotLeaderException(String message) {
      super(message);
    }
  }
}
