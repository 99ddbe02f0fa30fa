package io.bloomoperator.runtime;

import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * How the operator process runs, from environment variables (documented in docs/configuration.md).
 *
 * @param httpPort port of /healthz, /readyz and /metrics (BLOOM_HTTP_PORT, default 8080)
 * @param leaderElection whether replicas elect a leader through a Lease (BLOOM_LEADER_ELECTION,
 *     default true inside a pod, i.e. when POD_NAMESPACE is set)
 * @param leaseNamespace namespace of the Lease (POD_NAMESPACE)
 * @param identity this replica's name in the Lease (POD_NAME, else HOSTNAME)
 * @param exitOnLostLease whether losing the lease ends the process (true in a pod, where the
 *     kubelet restarts it as a fresh follower; false when embedded, e.g. in tests)
 * @param namespaces namespaces whose BloomFilters are reconciled (BLOOM_WATCH_NAMESPACES,
 *     comma-separated); empty means all namespaces
 */
public record RuntimeOptions(
    int httpPort,
    boolean leaderElection,
    String leaseNamespace,
    String identity,
    boolean exitOnLostLease,
    Set<String> namespaces) {

  public RuntimeOptions {
    namespaces = Set.copyOf(namespaces);
  }

  /** All namespaces. */
  public RuntimeOptions(
      int httpPort,
      boolean leaderElection,
      String leaseNamespace,
      String identity,
      boolean exitOnLostLease) {
    this(httpPort, leaderElection, leaseNamespace, identity, exitOnLostLease, Set.of());
  }

  public static final String LEASE_NAME = "bloom-operator-leader";

  public static RuntimeOptions fromEnvironment(Map<String, String> env) {
    String namespace = env.get("POD_NAMESPACE");
    String election = env.get("BLOOM_LEADER_ELECTION");
    boolean elect = election == null ? namespace != null : Boolean.parseBoolean(election);
    if (elect && namespace == null) {
      throw new IllegalArgumentException(
          "BLOOM_LEADER_ELECTION=true needs POD_NAMESPACE for the Lease");
    }
    String identity = env.getOrDefault("POD_NAME", env.getOrDefault("HOSTNAME", "bloom-operator"));
    Set<String> watched =
        Arrays.stream(env.getOrDefault("BLOOM_WATCH_NAMESPACES", "").split(","))
            .map(String::strip)
            .filter(ns -> !ns.isEmpty())
            .collect(Collectors.toUnmodifiableSet());
    return new RuntimeOptions(
        Integer.parseInt(env.getOrDefault("BLOOM_HTTP_PORT", "8080")),
        elect,
        namespace,
        identity,
        true,
        watched);
  }
}
