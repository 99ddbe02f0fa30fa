package io.bloomoperator.faults;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Open watches as kube-apiserver itself counts them, from its {@code /metrics}: every client's (the
 * operator's informers, the readers', the checker's), so a watch opened and never closed shows here
 * whichever process leaked it.
 */
final class ApiServerWatches {

  /** Long-running requests being served now, with their labels. */
  private static final String LONGRUNNING = "apiserver_longrunning_requests";

  private static final Pattern SAMPLE =
      Pattern.compile("(?m)^([a-z_]+)\\{([^}]*)\\} ([0-9.eE+-]+)$");
  private static final Pattern LABEL = Pattern.compile("([a-z_]+)=\"([^\"]*)\"");

  /**
   * @param byResource WATCH requests being served, by resource ({@code configmaps}, …)
   */
  record Counts(Map<String, Long> byResource) {
    long watches() {
      return byResource.values().stream().mapToLong(Long::longValue).sum();
    }
  }

  private ApiServerWatches() {}

  /** Scrapes the API server {@code admin} talks to (it needs the right to GET /metrics). */
  static Counts scrape(KubernetesClient admin) {
    String text = admin.raw("/metrics");
    if (text == null || !text.contains(LONGRUNNING)) {
      throw new IllegalStateException("kube-apiserver's /metrics has no " + LONGRUNNING);
    }
    return parse(text);
  }

  static Counts parse(String text) {
    Map<String, Long> byResource = new TreeMap<>();
    Matcher sample = SAMPLE.matcher(text);
    while (sample.find()) {
      if (!sample.group(1).equals(LONGRUNNING)) {
        continue;
      }
      Map<String, String> labels = new TreeMap<>();
      Matcher label = LABEL.matcher(sample.group(2));
      while (label.find()) {
        labels.put(label.group(1), label.group(2));
      }
      long value = (long) Double.parseDouble(sample.group(3));
      if ("WATCH".equals(labels.get("verb"))) {
        byResource.merge(labels.getOrDefault("resource", "?"), value, Long::sum);
      }
    }
    return new Counts(byResource);
  }
}
