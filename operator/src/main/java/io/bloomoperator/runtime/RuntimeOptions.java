package io.bloomoperator.runtime;

import java.util.Map;

/**
 * How the operator process runs, from environment variables (documented in
 * docs/configuration.md).
 *
 * @param httpPort port of /healthz, /readyz and /metrics (BLOOM_HTTP_PORT, default 8080)
 * @param leaderElection whether replicas elect a leader through a Lease (BLOOM_LEADER_ELECTION,
 *     default true inside a pod, i.e. when POD_NAMESPACE is set)
 * @param leaseNamespace namespace of the Lease (POD_NAMESPACE)
 * @param identity this replica's name in the Lease (POD_NAME, else HOSTNAME)
 * @param exitOnLostLease whether losing the lease ends the process (true in a pod, where the
 *     kubelet restarts it as a fresh follower; false when embedded, e.g. in tests)
 */
public record RuntimeOptions(int httpPort, boolean leaderElection, String leaseNamespace,
    String identity, boolean exitOnLostLease) {

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
    return new RuntimeOptions(Integer.parseInt(env.getOrDefault("BLOOM_HTTP_PORT", "8080")),
        elect, namespace, identity, true);
  }
}
