package io.bloomoperator.readers;

import io.bloomoperator.snapshot.ReaderReport;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The parsed reader reports the operator knows, by namespace and Lease name: a few numbers per
 * reader, never the Lease itself (whose annotations alone may be 256 KB). At most {@code
 * maxPerNamespace} reports per namespace: a namespace that creates Leases without end is ignored
 * beyond that, and costs the operator bounded memory whatever it writes.
 */
final class ReportStore {

  private final int maxPerNamespace;
  private final Map<String, Map<String, ReaderReport>> byNamespace = new ConcurrentHashMap<>();

  ReportStore(int maxPerNamespace) {
    this.maxPerNamespace = maxPerNamespace;
  }

  /** Adds or replaces the report of Lease {@code name}; false if the namespace is full. */
  synchronized boolean put(String namespace, String name, ReaderReport report) {
    Map<String, ReaderReport> reports =
        byNamespace.computeIfAbsent(namespace, n -> new ConcurrentHashMap<>());
    if (!reports.containsKey(name) && reports.size() >= maxPerNamespace) {
      return false;
    }
    reports.put(name, report);
    return true;
  }

  synchronized void remove(String namespace, String name) {
    Map<String, ReaderReport> reports = byNamespace.get(namespace);
    if (reports != null) {
      reports.remove(name);
      if (reports.isEmpty()) {
        byNamespace.remove(namespace);
      }
    }
  }

  /**
   * Replaces every report of {@code namespace} (of all namespaces for null) with {@code listed} at
   * once, so a relist never shows a moment without readers.
   */
  synchronized void replace(String namespace, ReportStore listed) {
    if (namespace == null) {
      byNamespace.clear();
    } else {
      byNamespace.remove(namespace);
    }
    byNamespace.putAll(listed.byNamespace);
  }

  /** The reports about filter {@code filterName} of {@code namespace}. */
  List<ReaderReport> about(String namespace, String filterName) {
    Map<String, ReaderReport> reports = byNamespace.get(namespace);
    if (reports == null) {
      return List.of();
    }
    return reports.values().stream().filter(r -> r.filterName().equals(filterName)).toList();
  }

  /**
   * The reports about the filters {@code filterNames} names (by namespace), by namespace; the
   * namespaces without any left out.
   */
  Map<String, List<ReaderReport>> about(Map<String, Set<String>> filterNames) {
    Map<String, List<ReaderReport>> found = new HashMap<>();
    filterNames.forEach(
        (namespace, names) -> {
          Map<String, ReaderReport> reports = byNamespace.get(namespace);
          if (reports != null) {
            List<ReaderReport> about =
                reports.values().stream().filter(r -> names.contains(r.filterName())).toList();
            if (!about.isEmpty()) {
              found.put(namespace, about);
            }
          }
        });
    return found;
  }
}
