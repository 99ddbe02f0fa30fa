package io.bloomoperator.objectstore;

import io.bloomoperator.api.Durations;
import io.bloomoperator.source.EgressPolicy;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * How the operator uses object stores.
 *
 * @param operatorNamespace where BloomStore credential Secrets are read (BLOOM_OPERATOR_NAMESPACE,
 *     else POD_NAMESPACE); null: only stores with the default credential chain work
 * @param cleanupTimeout how long after a BloomFilter's deletion the operator keeps trying to delete
 *     its objects before the finalizer lets the deletion proceed (BLOOM_STORE_CLEANUP_TIMEOUT)
 * @param requestTimeout bounds each request to a store, retries included
 * @param resolver resolves store host names for every connection; the system's resolver except in
 *     tests, which make a name resolve differently from one connection to the next
 * @param namespaceUploadBytesPerHour bytes all filters of one namespace may upload to object stores
 *     in any hour (BLOOM_STORE_NAMESPACE_UPLOAD_BYTES_PER_HOUR): bandwidth and request cost of a
 *     shared bucket, which the stored-bytes budget (namespaceBudgetBytes) does not bound
 * @param egress where store endpoints may connect (BLOOM_STORE_ALLOW, BLOOM_STORE_DENY); empty when
 *     neither is set, and then the sources' policy (BLOOM_HTTP_ALLOW/DENY) judges stores too, as
 *     before these settings existed. Stores have a policy of their own so that admitting a private
 *     store endpoint does not admit it for every tenant's http and jdbc sources
 */
public record StoreSettings(
    String operatorNamespace,
    Duration cleanupTimeout,
    Duration requestTimeout,
    StoreResolver resolver,
    long namespaceUploadBytesPerHour,
    Optional<EgressPolicy> egress) {

  public static final Duration DEFAULT_CLEANUP_TIMEOUT = Duration.ofHours(1);
  public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofMinutes(2);

  /**
   * Bytes all filters of one namespace may upload to object stores in any hour: 32 whole snapshots
   * of the installs' largest store snapshot (128 MiB).
   */
  public static final long DEFAULT_NAMESPACE_UPLOAD_BYTES_PER_HOUR = 4L * 1024 * 1024 * 1024;

  public StoreSettings {
    if (cleanupTimeout.isNegative() || requestTimeout.isNegative() || requestTimeout.isZero()) {
      throw new IllegalArgumentException("clean-up and request timeouts must be positive");
    }
    if (namespaceUploadBytesPerHour < 1) {
      throw new IllegalArgumentException("the namespace upload budget must be positive");
    }
  }

  /**
   * From BLOOM_OPERATOR_NAMESPACE (else POD_NAMESPACE), BLOOM_STORE_CLEANUP_TIMEOUT,
   * BLOOM_STORE_NAMESPACE_UPLOAD_BYTES_PER_HOUR, BLOOM_STORE_ALLOW and BLOOM_STORE_DENY.
   *
   * @throws IllegalArgumentException naming the setting that is not valid
   */
  public static StoreSettings fromEnvironment(Map<String, String> env) {
    String namespace = env.get("BLOOM_OPERATOR_NAMESPACE");
    if (namespace == null || namespace.isBlank()) {
      namespace = env.get("POD_NAMESPACE");
    }
    return new StoreSettings(
        namespace == null || namespace.isBlank() ? null : namespace.strip(),
        cleanupTimeout(env.get("BLOOM_STORE_CLEANUP_TIMEOUT")),
        DEFAULT_REQUEST_TIMEOUT,
        StoreResolver.SYSTEM,
        io.bloomoperator.env.EnvNumbers.positive(
            env,
            "BLOOM_STORE_NAMESPACE_UPLOAD_BYTES_PER_HOUR",
            DEFAULT_NAMESPACE_UPLOAD_BYTES_PER_HOUR),
        egress(env.get("BLOOM_STORE_ALLOW"), env.get("BLOOM_STORE_DENY")));
  }

  /** These settings with credentials read from {@code namespace}. */
  public StoreSettings inNamespace(String namespace) {
    return new StoreSettings(
        namespace, cleanupTimeout, requestTimeout, resolver, namespaceUploadBytesPerHour, egress);
  }

  /** These settings with another clean-up timeout. */
  public StoreSettings withCleanupTimeout(Duration timeout) {
    return new StoreSettings(
        operatorNamespace, timeout, requestTimeout, resolver, namespaceUploadBytesPerHour, egress);
  }

  /** These settings with another namespace upload budget. */
  public StoreSettings withNamespaceUploadBytesPerHour(long bytes) {
    return new StoreSettings(
        operatorNamespace, cleanupTimeout, requestTimeout, resolver, bytes, egress);
  }

  /** These settings with another resolver of store host names. */
  public StoreSettings withResolver(StoreResolver resolver) {
    return new StoreSettings(
        operatorNamespace,
        cleanupTimeout,
        requestTimeout,
        resolver,
        namespaceUploadBytesPerHour,
        egress);
  }

  /** The policy that judges store endpoints: the stores' own, else {@code sources}'. */
  public EgressPolicy egressOr(EgressPolicy sources) {
    return egress.orElse(sources);
  }

  private static Optional<EgressPolicy> egress(String allow, String deny) {
    if ((allow == null || allow.isBlank()) && (deny == null || deny.isBlank())) {
      return Optional.empty();
    }
    return Optional.of(EgressPolicy.of(allow, deny, "BLOOM_STORE_ALLOW", "BLOOM_STORE_DENY"));
  }

  private static Duration cleanupTimeout(String raw) {
    if (raw == null || raw.isBlank()) {
      return DEFAULT_CLEANUP_TIMEOUT;
    }
    try {
      return Durations.parse(raw.strip());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("BLOOM_STORE_CLEANUP_TIMEOUT: " + e.getMessage(), e);
    }
  }
}
