package io.bloomoperator.examples.cacheguard;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import io.bloomoperator.watch.FalsePositiveObservation;
import io.bloomoperator.watch.LiveBloomFilter;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code GET /stats}: the look-up counters and the served filter version as JSON, e.g.
 *
 * <pre>{@code
 * {"filter":{"namespace":"demo","name":"product-ids","ready":true,"version":3,"keys":10000,
 *   "loads":3,"failures":0,"expectedFalsePositiveRate":0.0099,"observedFalsePositiveRate":0.0101,
 *   "reportedTruePositives":150,"reportedFalsePositives":12},
 *  "lookups":1200,"filterRejections":1000,"cacheHits":150,...,"dbQueries":50,...}
 * }</pre>
 */
final class StatsHandler implements HttpHandler {

  private final GuardStats stats;
  private final LiveBloomFilter<Long> filter;

  StatsHandler(GuardStats stats, LiveBloomFilter<Long> filter) {
    this.stats = stats;
    this.filter = filter;
  }

  @Override
  public void handle(HttpExchange exchange) throws IOException {
    if (!HttpResponses.allowGetOnly(exchange)) {
      return;
    }
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("filter", filterInfo());
    body.putAll(stats.asMap());
    HttpResponses.send(exchange, 200, HttpResponses.JSON, Json.write(body));
  }

  private Map<String, Object> filterInfo() {
    Map<String, Object> info = new LinkedHashMap<>();
    info.put("namespace", filter.namespace());
    info.put("name", filter.filterName());
    info.put("ready", filter.isReady());
    info.put("version", filter.currentVersion());
    info.put("keys", filter.currentManifest().map(m -> m.keyCount()).orElse(0L));
    info.put("loads", filter.loads());
    info.put("failures", filter.failures());
    // Estimated from the outcomes ProductLookup reports for the served version; NaN (written as
    // null) until a maybe-present ID was looked up.
    FalsePositiveObservation observed = filter.observedFalsePositives();
    info.put(
        "expectedFalsePositiveRate",
        filter.currentManifest().map(m -> m.expectedFpp()).orElse(null));
    info.put("observedFalsePositiveRate", Double.isNaN(observed.rate()) ? null : observed.rate());
    info.put("reportedTruePositives", observed.truePositives());
    info.put("reportedFalsePositives", observed.falsePositives());
    return info;
  }
}
