package io.bloomoperator.source;

import io.bloomoperator.api.Reasons;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The only way a source reads a Secret: fetches it from the BloomFilter's own namespace and lets it
 * be used only as far as the Secret's owner allowed.
 *
 * <p>Why: the operator can read every Secret in the cluster, but the author of a BloomFilter may
 * not be allowed to read any. Without this gate, naming a Secret in a BloomFilter would publish its
 * lines into a ConfigMap ({@code source.secret}) or send its values to a server the author chose
 * ({@code http.headersSecret}, {@code jdbc.credentialsSecret}).
 *
 * <p>Under {@link Mode#ANNOTATION} (the default) a Secret must opt in:
 *
 * <ul>
 *   <li>{@value #ALLOWED_FILTERS}: comma-separated names of the BloomFilters (same namespace) that
 *       may use it, or {@code *} for all of them;
 *   <li>{@value #ALLOWED_HOSTS}, for Secrets whose values are sent to a server: comma-separated
 *       hosts the values may go to, as {@code host}, {@code host:port} or {@code *.domain}
 *       (matching any subdomain, not the domain itself). Hosts are compared with the host written
 *       in the source's URL, case-insensitively, never with resolved addresses.
 * </ul>
 *
 * Only someone who may update the Secret can add these annotations, so using a Secret never reaches
 * further than its owner chose. {@link Mode#NAMESPACE} trusts the namespace boundary instead (any
 * Secret of the namespace, sent anywhere), for single-tenant clusters where everyone who can create
 * a BloomFilter can also read the namespace's Secrets.
 */
public final class SecretAccess {

  /** Annotation on a Secret naming the BloomFilters that may use it. */
  public static final String ALLOWED_FILTERS = "bloomoperator.io/allowed-filters";

  /** Annotation on a Secret naming the hosts its values may be sent to. */
  public static final String ALLOWED_HOSTS = "bloomoperator.io/allowed-hosts";

  /** Which Secrets of its namespace a BloomFilter may use. */
  public enum Mode {
    /** Only Secrets annotated for the filter (and, when sent, for the host). The default. */
    ANNOTATION,
    /** Every Secret of the filter's namespace, sent to any host. */
    NAMESPACE;

    /**
     * Parses {@code annotation} or {@code namespace} (any case).
     *
     * @throws IllegalArgumentException for anything else
     */
    public static Mode parse(String text) {
      for (Mode mode : values()) {
        if (mode.name().equalsIgnoreCase(text.strip())) {
          return mode;
        }
      }
      throw new IllegalArgumentException("must be 'annotation' or 'namespace', got '" + text + "'");
    }
  }

  private final KubernetesClient client;
  private final String namespace;
  private final String filterName;
  private final Mode mode;

  /**
   * @param namespace the BloomFilter's namespace, the only one Secrets are read from
   * @param filterName the BloomFilter whose source asks
   */
  public SecretAccess(KubernetesClient client, String namespace, String filterName, Mode mode) {
    this.client = client;
    this.namespace = namespace;
    this.filterName = filterName;
    this.mode = mode;
  }

  /** The BloomFilter's namespace. */
  public String namespace() {
    return namespace;
  }

  /**
   * A Secret whose content becomes part of a published snapshot.
   *
   * @param field the spec field naming it, for messages (e.g. {@code source.secret})
   * @throws SourceException {@link SourceException#NOT_FOUND} when it does not exist, {@value
   *     Reasons#SECRET_NOT_ALLOWED} when it does not allow this filter
   */
  public Secret forPublishing(String name, String field) throws SourceException {
    return allowingFilter(name, field);
  }

  /**
   * A Secret the operator uses itself, neither publishing nor sending its values (e.g. a CA
   * certificate to verify a server with).
   *
   * @param field the spec field naming it, for messages (e.g. {@code changes.kafka.tls.caSecret})
   * @throws SourceException {@link SourceException#NOT_FOUND} when it does not exist, {@value
   *     Reasons#SECRET_NOT_ALLOWED} when it does not allow this filter
   */
  public Secret forUse(String name, String field) throws SourceException {
    return allowingFilter(name, field);
  }

  private Secret allowingFilter(String name, String field) throws SourceException {
    Secret secret = fetch(name, field);
    checkFilter(secret, name, field);
    return secret;
  }

  /** A host and port a Secret's values are sent to. */
  public record Destination(String host, int port) {}

  /**
   * A Secret whose values are sent to {@code host:port}.
   *
   * @param field the spec field naming it, for messages (e.g. {@code http.headersSecret})
   * @throws SourceException {@link SourceException#NOT_FOUND} when it does not exist, {@value
   *     Reasons#SECRET_NOT_ALLOWED} when it does not allow this filter or this host
   */
  public Secret forSending(String name, String field, String host, int port)
      throws SourceException {
    return forSending(name, field, List.of(new Destination(host, port)));
  }

  /**
   * A Secret whose values are sent to each of {@code destinations} (e.g. every bootstrap server of
   * a Kafka stream), read with one request however many there are.
   *
   * @param field the spec field naming it, for messages (e.g. {@code http.headersSecret})
   * @throws SourceException {@link SourceException#NOT_FOUND} when it does not exist, {@value
   *     Reasons#SECRET_NOT_ALLOWED} when it does not allow this filter or one of the destinations
   */
  public Secret forSending(String name, String field, List<Destination> destinations)
      throws SourceException {
    Secret secret = fetch(name, field);
    checkFilter(secret, name, field);
    if (mode != Mode.ANNOTATION) {
      return secret;
    }
    String hosts = annotation(secret, ALLOWED_HOSTS);
    for (Destination to : destinations) {
      if (!hostAllowed(hosts, to.host(), to.port())) {
        throw new SourceException(
            Reasons.SECRET_NOT_ALLOWED,
            "Secret "
                + name
                + " ("
                + field
                + ") may not be "
                + "sent to "
                + to.host()
                + ":"
                + to.port()
                + ": its annotation "
                + ALLOWED_HOSTS
                + " does not list that host; nothing was sent");
      }
    }
    return secret;
  }

  private Secret fetch(String name, String field) throws SourceException {
    Secret secret;
    try {
      secret = client.secrets().inNamespace(namespace).withName(name).get();
    } catch (KubernetesClientException e) {
      throw new SourceException(
          Reasons.SOURCE_UNREADABLE,
          "cannot read Secret " + name + " (" + field + "): " + e.getMessage(),
          e);
    }
    if (secret == null) {
      throw new SourceException(
          Reasons.SOURCE_NOT_FOUND,
          "Secret " + name + " (" + field + ") not found in namespace " + namespace);
    }
    return secret;
  }

  private void checkFilter(Secret secret, String name, String field) throws SourceException {
    if (mode == Mode.NAMESPACE) {
      return;
    }
    List<String> allowed = list(annotation(secret, ALLOWED_FILTERS));
    if (!allowed.contains("*") && !allowed.contains(filterName)) {
      throw new SourceException(
          Reasons.SECRET_NOT_ALLOWED,
          "Secret "
              + name
              + " ("
              + field
              + ") does not "
              + "allow BloomFilter "
              + filterName
              + ": its owner must add it to the annotation "
              + ALLOWED_FILTERS
              + "; nothing was read or sent");
    }
  }

  /** Whether {@code host:port} matches one entry of an allowed-hosts annotation value. */
  static boolean hostAllowed(String annotation, String host, int port) {
    String wanted = unbracket(host.toLowerCase(Locale.ROOT));
    for (String entry : list(annotation)) {
      String pattern = entry.toLowerCase(Locale.ROOT);
      String portText = null;
      int close = pattern.indexOf(']');
      if (pattern.startsWith("[") && close > 0) {
        // "[v6]" or "[v6]:port"
        portText = pattern.startsWith(":", close + 1) ? pattern.substring(close + 2) : null;
        pattern = pattern.substring(1, close);
      } else if (pattern.indexOf(':') > 0 && pattern.indexOf(':') == pattern.lastIndexOf(':')) {
        // "host:port"; a bare IPv6 address has several colons and no port
        portText = pattern.substring(pattern.indexOf(':') + 1);
        pattern = pattern.substring(0, pattern.indexOf(':'));
      }
      if (portText != null && !portText.equals(Integer.toString(port))) {
        continue; // another port, or a malformed one: this entry allows nothing here
      }
      if (pattern.startsWith("*.")) {
        String suffix = pattern.substring(1);
        if (wanted.endsWith(suffix) && wanted.length() > suffix.length()) {
          return true;
        }
      } else if (!pattern.isEmpty() && pattern.equals(wanted)) {
        return true;
      }
    }
    return false;
  }

  private static String unbracket(String host) {
    return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
  }

  private static String annotation(Secret secret, String key) {
    Map<String, String> annotations =
        secret.getMetadata() == null ? null : secret.getMetadata().getAnnotations();
    return annotations == null ? null : annotations.get(key);
  }

  private static List<String> list(String value) {
    if (value == null) {
      return List.of();
    }
    return Arrays.stream(value.split(",")).map(String::strip).filter(s -> !s.isEmpty()).toList();
  }
}
