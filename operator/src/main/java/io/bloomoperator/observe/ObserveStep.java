package io.bloomoperator.observe;

import io.bloomoperator.api.RebuildRequest;
import io.bloomoperator.backend.SnapshotBackends;
import io.bloomoperator.publish.OwnManifests;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.SnapshotJanitor;
import io.bloomoperator.publish.SnapshotStore;
import io.bloomoperator.publish.WriteFence;
import io.bloomoperator.run.Decision;
import io.bloomoperator.run.FilterRun;
import io.bloomoperator.run.RunState;
import io.bloomoperator.run.Step;
import io.bloomoperator.snapshot.ChunkStore;
import io.bloomoperator.source.SourceException;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The first step of every reconcile: reads the manifest once, keeps of it only what {@link
 * OwnManifests} trusts, lets the janitor clean by that state (never by a foreign manifest:
 * leftovers of an interrupted publish go before anything is written under their names), asks the
 * source for its change token and the schedule for its {@link Decision}.
 */
public final class ObserveStep implements Step {

  private static final Logger LOG = LoggerFactory.getLogger(ObserveStep.class);

  private final OwnManifests ownManifests;
  private final WriteFence fence;
  private final SnapshotBackends backends;
  private final Duration minPublishInterval;

  public ObserveStep(
      OwnManifests ownManifests,
      WriteFence fence,
      SnapshotBackends backends,
      Duration minPublishInterval) {
    this.ownManifests = ownManifests;
    this.fence = fence;
    this.backends = backends;
    this.minPublishInterval = minPublishInterval;
  }

  @Override
  public Next apply(FilterRun run, RunState ignored)
      throws SourceException, PublishException, IOException {
    OwnManifests.Checked checked = ownManifests.check(run.filter(), run.store().read(), run.now());
    RunState observed;
    if (checked.foreign()) {
      LOG.warn("{}/{}: {}", run.namespace(), run.name(), checked.problem());
      run.events().warning(run.filter(), OwnManifests.EVENT_REASON, checked.problem());
      run.report().sawVersion(checked.seenVersion());
    }
    if (checked.foreign() && checked.usable().manifest() == null) {
      // Found by the fault suite (operator-kill): the janitor cleans only by a trusted manifest, so
      // the chunks of a publish interrupted before its manifest stay while this one is refused; the
      // next version is numbered above them, or its chunk names collide with theirs on every try.
      run.report().sawVersion(highestChunkVersion(run.store()));
      observed = new RunState(checked.usable(), Optional.empty(), null, null);
    } else {
      // The janitor deletes by what was just read: a replica frozen since, and no longer the
      // leader, would delete the chunks of versions the new leader published.
      fence.check();
      SnapshotStore store = run.store().leaving(backends.formerStores(run, checked.usable()));
      SnapshotJanitor.Cleaned cleaned =
          SnapshotJanitor.clean(
              store,
              checked.usable(),
              run.spec().retainPrevious(),
              SnapshotStore.keepVersions(run.filter()),
              run.now());
      observed = new RunState(cleaned.state(), cleaned.graceLeft(), null, null);
    }
    String token = run.source().changeToken();
    Decision decision =
        Decision.decide(
            Decision.Published.of(observed.current()),
            token,
            run.filter().getMetadata().getGeneration(),
            RebuildRequest.pending(run.filter()),
            run.spec().refresh(),
            minPublishInterval,
            run.now());
    return Next.go(new RunState(observed.current(), observed.graceLeft(), token, decision));
  }

  /** The highest version any chunk of the filter's own has (0: none). */
  private static long highestChunkVersion(SnapshotStore store) throws IOException {
    long highest = 0;
    for (ChunkStore.Stored chunk : store.chunks().list()) {
      highest = Math.max(highest, chunk.part().version());
    }
    return highest;
  }
}
