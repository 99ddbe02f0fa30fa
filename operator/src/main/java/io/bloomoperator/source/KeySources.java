package io.bloomoperator.source;

import io.bloomoperator.api.SourceSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.stream.Stream;

/** Turns the resource's source declaration into a {@link KeySource}. */
public final class KeySources {

  private KeySources() {}

  /**
   * The source the spec declares. The schema guarantees exactly one kind; a resource that slipped
   * past it (e.g. an older CRD) gets a clear error instead of a guess.
   *
   * @param secrets the only way the source may read Secrets; its namespace is the filter's
   * @param http what an http source may reach and cost, set by the operator's administrator
   * @param jdbc what a jdbc source may reach and cost, set by the operator's administrator
   */
  public static KeySource from(
      SourceSpec spec,
      KubernetesClient client,
      SecretAccess secrets,
      HttpSourceSettings http,
      JdbcSourceSettings jdbc) {
    String namespace = secrets.namespace();
    if (spec == null) {
      throw new IllegalArgumentException("spec.source is required");
    }
    long kinds =
        Stream.of(
                spec.getInline(),
                spec.getConfigMap(),
                spec.getSecret(),
                spec.getHttp(),
                spec.getJdbc())
            .filter(java.util.Objects::nonNull)
            .count();
    if (kinds != 1) {
      throw new IllegalArgumentException(
          "exactly one of inline, configMap, secret, http or jdbc must be set in spec.source");
    }
    if (spec.getInline() != null) {
      return new InlineSource(spec.getInline());
    }
    if (spec.getConfigMap() != null) {
      return new ConfigMapSource(
          client, namespace, spec.getConfigMap().getName(), spec.getConfigMap().getKey());
    }
    if (spec.getSecret() != null) {
      return new SecretSource(secrets, spec.getSecret().getName(), spec.getSecret().getKey());
    }
    if (spec.getHttp() != null) {
      return spec.getHttp().getUrls() != null
          ? new HttpUrlsSource(secrets, spec.getHttp(), http)
          : new HttpSource(secrets, spec.getHttp(), http);
    }
    return new JdbcSource(secrets, spec.getJdbc(), jdbc);
  }
}
