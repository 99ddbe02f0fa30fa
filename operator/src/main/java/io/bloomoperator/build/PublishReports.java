package io.bloomoperator.build;

import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.metrics.BuildMetrics;
import io.bloomoperator.publish.PublishPlan;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.publish.RetainedVersions;
import io.bloomoperator.rollout.Canaries;
import io.bloomoperator.rollout.RolloutGate;
import io.bloomoperator.run.FilterRun;
import io.bloomoperator.snapshot.Manifest;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What a finished publish tells the status draft, the events and the metrics. */
final class PublishReports {

  private static final Logger LOG = LoggerFactory.getLogger(PublishReports.class);

  private final BuildMetrics metrics;

  PublishReports(BuildMetrics metrics) {
    this.metrics = metrics;
  }

  /** A canary announced: its record, event and metric. */
  void announced(
      FilterRun ctx,
      FilterBuilder.Result built,
      PublishedSnapshot state,
      Manifest canary,
      PublishedSnapshot current,
      String token,
      Duration took) {
    metrics.published(ctx.filter(), canary.versionBytes(), took);
    String message =
        "canary version "
            + canary.version()
            + " ("
            + built.keys()
            + " keys from "
            + ctx.source().description()
            + ") announced to "
            + Canaries.percent(ctx.filter())
            + " % of the readers; version "
            + current.manifest().version()
            + " serves the others";
    LOG.info("{}/{}: {}", ctx.namespace(), ctx.name(), message);
    ctx.events().normal(ctx.filter(), Canaries.EVENT_STARTED, message);
    ctx.report().published(state);
    ctx.report().built(built);
    ctx.report().held(null);
    ctx.report().canary(Canaries.started(ctx.filter(), canary, token, ctx.now(), ctx.now()));
  }

  /** A version published (or the published one confirmed): status, events and metric. */
  void published(
      FilterRun ctx,
      FilterBuilder.Result built,
      PublishedSnapshot state,
      PublishPlan plan,
      boolean routine,
      Duration took) {
    BuildEvents events = new BuildEvents(ctx.events(), ctx.filter());
    String source = ctx.source().description();
    Manifest manifest = state.manifest();
    if (plan.newVersion()) {
      metrics.published(ctx.filter(), manifest.versionBytes(), took);
      events.published(manifest, built, source);
    } else {
      metrics.unchanged();
      events.unchanged(manifest, built, source, routine);
      LOG.info(
          "{}/{}: rebuilt from {}, content unchanged (version {})",
          ctx.namespace(),
          ctx.name(),
          source,
          manifest.version());
    }
    ctx.report().published(state);
    ctx.report().built(built);
    ctx.report().held(null);
    if (plan.newVersion()) {
      ctx.report().retained(RetainedVersions.of(state.configMap()));
    }
    if (RolloutGate.approval(ctx.filter()) != null) {
      ctx.report().approved(RolloutGate.approval(ctx.filter()));
    }
  }
}
