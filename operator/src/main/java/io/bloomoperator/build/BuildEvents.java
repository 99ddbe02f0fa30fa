package io.bloomoperator.build;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.ByteSizes;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.events.EventRecorder;
import io.bloomoperator.snapshot.Manifest;

/**
 * The Normal events of a build, worded in one place: it started, it published a version, or it
 * found the content unchanged. Texts name only the operator's own facts (versions, sizes, counts,
 * the source's description), nothing a tenant's source delivered.
 */
public final class BuildEvents {

  private final EventRecorder events;
  private final BloomFilter filter;

  public BuildEvents(EventRecorder events, BloomFilter filter) {
    this.events = events;
    this.filter = filter;
  }

  /** A build starts; a routine rebuild says nothing. */
  public void started(String source, boolean routine) {
    if (!routine) {
      events.normal(filter, "BuildStarted", "building from " + source);
    }
  }

  /** A new version was published. */
  public void published(Manifest manifest, FilterBuilder.Result built, String source) {
    events.normal(
        filter,
        "Published",
        "version "
            + manifest.version()
            + ": "
            + built.keys()
            + " keys, "
            + ByteSizes.human(manifest.totalBytes())
            + (manifest.chained()
                ? " as a delta of "
                    + ByteSizes.human(manifest.versionBytes())
                    + " (delta "
                    + manifest.deltas().size()
                    + " on base version "
                    + manifest.baseVersion()
                    + ")"
                : " in " + manifest.chunks().size() + " chunk(s)")
            + ", expected FPP "
            + String.format("%.3g", manifest.expectedFpp())
            + ", built in "
            + built.took().toMillis()
            + " ms from "
            + source);
  }

  /** The rebuild produced the published content; a routine rebuild says nothing. */
  public void unchanged(
      Manifest manifest, FilterBuilder.Result built, String source, boolean routine) {
    if (!routine) {
      events.normal(
          filter,
          "Unchanged",
          "rebuilt from "
              + source
              + " in "
              + built.took().toMillis()
              + " ms: content identical to version "
              + manifest.version()
              + ", nothing published");
    }
  }
}
