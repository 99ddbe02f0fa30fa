package io.bloomoperator.publish;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.SnapshotVersions;

/**
 * How the operator numbers new versions: one above the highest it knows, never outside {@link
 * SnapshotVersions}' range, and never moved far by a number it did not write. A version found in a
 * manifest ConfigMap, a {@code canary.json} or a reader report is anyone's to write who may edit
 * ConfigMaps or Leases in the namespace; if such a number could move numbering at will, one edit
 * would push every later version out of the range readers, reader reports and store clean-ups
 * accept, for good. So a foreign number counts only within {@link #FOREIGN_STEP} of the operator's
 * own record (its status): enough for a version readers really saw (a lost status write, a canary
 * withdrawn before its record was written), never enough to reach {@link SnapshotVersions#MAX}.
 */
public final class VersionNumbering {

  /** How far above the operator's own record a foreign version may move numbering. */
  public static final long FOREIGN_STEP = 1_000;

  private VersionNumbering() {}

  /**
   * Whether {@code foreign}, a version the operator did not write itself, moves numbering: only a
   * version in range and at most {@link #FOREIGN_STEP} above {@code ownRecord}.
   *
   * @param ownRecord the highest version the operator's own record (status) reports, 0: none
   */
  public static boolean moves(long ownRecord, long foreign) {
    return SnapshotVersions.valid(foreign) && foreign - Math.max(0, ownRecord) <= FOREIGN_STEP;
  }

  /**
   * The version after {@code highest}, the highest version known (0: none).
   *
   * @throws PublishException {@link Reasons#VERSIONS_EXHAUSTED} when that would be above {@link
   *     SnapshotVersions#MAX}: no component could read it back
   */
  public static long next(long highest) throws PublishException {
    if (highest >= SnapshotVersions.MAX) {
      throw new PublishException(
          Reasons.VERSIONS_EXHAUSTED,
          "version "
              + SnapshotVersions.MAX
              + " is the highest readers and stores accept; no version is published above it"
              + " (delete and re-create the filter to restart at 1)",
          null);
    }
    return Math.max(0, highest) + 1;
  }
}
