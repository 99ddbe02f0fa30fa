package io.bloomoperator.objectstore;

import io.bloomoperator.api.BloomStore;
import io.bloomoperator.api.BloomStoreSpec;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.StoreBudget;
import io.bloomoperator.publish.StoreReservations;
import io.bloomoperator.publish.WriteBudget;
import io.bloomoperator.snapshot.CaCertificates;
import io.bloomoperator.source.EgressCheckedDns;
import io.bloomoperator.source.EgressPolicy;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import javax.net.ssl.TrustManager;
import org.apache.hc.client5.http.impl.DefaultSchemePortResolver;
import org.apache.hc.client5.http.impl.routing.DefaultRoutePlanner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.http.apache5.ProxyConfiguration;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * Resolves the store a BloomFilter names to a client of it: the {@link BloomStore} must exist and
 * allow the filter's namespace, its endpoint must pass the operator's egress policy, and its
 * credentials come from a Secret in the operator's namespace (or the SDK's default chain). Clients
 * are cached per store and replaced (the old one closed) when the BloomStore, its Secret or its CA
 * bundle changes.
 *
 * <p><b>Where a client connects.</b> The endpoint's host is judged when the client is built (a
 * clear reason at once), and again on every new connection, since DNS answers change (rebinding):
 * the client's HTTP stack (Apache HttpClient 5) resolves names only through {@link
 * EgressCheckedDns} (shared with the http sources) and connects only to the addresses it returned,
 * never through a proxy (the JVM's and the environment's proxy settings are ignored and every route
 * is planned direct; a proxy would connect to addresses the policy never sees).
 *
 * <p><b>TLS.</b> Without {@code spec.tls} the store's certificate is verified by the JVM's default
 * CAs; with {@code spec.tls.caBundle}, by that bundle's CAs instead ({@link CaCertificates}), read
 * from a ConfigMap or Secret of the operator's namespace like the credentials.
 *
 * <p>Failures carry a reason from {@link Reasons} and a message naming only the store: the
 * endpoint, bucket and credentials are the administrator's and go to the log at most.
 */
public final class ObjectStores implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ObjectStores.class);

  /** Keys of the credentials Secret. */
  public static final String ACCESS_KEY_ID = "accessKeyId";

  public static final String SECRET_ACCESS_KEY = "secretAccessKey";

  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
  private static final Duration SOCKET_TIMEOUT = Duration.ofSeconds(30);

  private final StoreSettings settings;
  private final EgressPolicy egress;
  private final Map<String, Cached> clients = new HashMap<>();

  /** Bytes each namespace uploaded to object stores in the last hour. */
  private final WriteBudget uploads;

  /** Bytes of uploads in progress per store and namespace. */
  private final StoreReservations reservations;

  /** Why a store cannot be used, in a fixed text that names nothing of its definition. */
  private static final class Refusal extends Exception {
    Refusal(String text, Throwable cause) {
      super(text, cause, false, false);
    }
  }

  /** A client and what it was built from: a change of either means a new client. */
  private record Cached(String version, S3Client client) {}

  /**
   * A resolved store: its definition and a client of it.
   *
   * @param uploads the operator's per-namespace upload budget (shared by every store)
   * @param reservations uploads in progress, operator-wide
   */
  public record Store(
      String name,
      BloomStoreSpec spec,
      S3Client client,
      WriteBudget uploads,
      StoreReservations reservations) {

    /** The budgets of {@code namespace}'s filters in this store ({@link StoreBudget}). */
    public StoreBudget budget(String namespace) {
      return new StoreBudget(
          name,
          namespace,
          spec.namespaceBudgetOrDefault(),
          () -> namespaceBytes(namespace),
          uploads,
          reservations);
    }

    /** The chunk store of one filter in this store. */
    public S3ChunkStore chunks(
        String namespace, String filterName, Duration minAge, java.time.Clock clock) {
      return new S3ChunkStore(
          client,
          name,
          spec.getBucket(),
          spec.prefixOrDefault(),
          namespace,
          filterName,
          minAge,
          clock);
    }

    /** Bytes the objects of {@code namespace}'s filters hold in this store. */
    public long namespaceBytes(String namespace) throws java.io.IOException {
      String prefix = spec.prefixOrDefault();
      return S3ChunkStore.bytesUnder(
          client, name, spec.getBucket(), (prefix.isEmpty() ? "" : prefix + "/") + namespace + "/");
    }
  }

  /**
   * @param sourceEgress the sources' egress policy, which judges store endpoints only when the
   *     settings hold no policy of the stores' own ({@link StoreSettings#egressOr})
   */
  public ObjectStores(StoreSettings settings, EgressPolicy sourceEgress) {
    this.settings = settings;
    this.egress = settings.egressOr(sourceEgress);
    this.uploads = StoreBudget.uploadBudget(settings.namespaceUploadBytesPerHour());
    this.reservations = new StoreReservations();
  }

  /** The settings these stores were made with. */
  public StoreSettings settings() {
    return settings;
  }

  /**
   * The store {@code name} for a BloomFilter of {@code namespace}.
   *
   * @throws PublishException {@link Reasons#STORE_NOT_FOUND}, {@link Reasons#STORE_NOT_ALLOWED} or
   *     {@link Reasons#STORE_UNAVAILABLE}
   */
  public Store resolve(KubernetesClient client, String name, String namespace)
      throws PublishException {
    BloomStore store = definition(client, name);
    if (!allows(client, store.getSpec(), namespace)) {
      throw new PublishException(
          Reasons.STORE_NOT_ALLOWED,
          "BloomStore " + name + " does not allow namespace " + namespace + "; nothing was written",
          null);
    }
    return connect(client, store);
  }

  /**
   * The store {@code name} whatever namespaces it allows: a deleted filter's objects are removed
   * even from a store its namespace may no longer use.
   */
  public Store forCleanUp(KubernetesClient client, String name) throws PublishException {
    return connect(client, definition(client, name));
  }

  /**
   * Whether BloomStore {@code name} exists and allows {@code namespace}: what a store name the
   * operator did not record itself (a bookkeeping annotation anyone who may edit the ConfigMap can
   * change) must pass before the operator acts on it, so that such a name cannot reach into a store
   * the namespace may not use.
   */
  public boolean admits(KubernetesClient client, String name, String namespace) {
    try {
      return allows(client, definition(client, name).getSpec(), namespace);
    } catch (PublishException e) {
      return false;
    }
  }

  /**
   * Where BloomStore {@code name} keeps its objects; empty when it does not exist. Whatever
   * namespaces it allows: it only tells two names of one location apart.
   */
  public Optional<StoreLocation> location(KubernetesClient client, String name) {
    try {
      return Optional.of(StoreLocation.of(definition(client, name).getSpec()));
    } catch (PublishException e) {
      return Optional.empty();
    }
  }

  /** A client of {@code store} as it is defined now; for {@link BloomStore} status checks. */
  public Store connect(KubernetesClient client, BloomStore store) throws PublishException {
    String name = store.getMetadata().getName();
    BloomStoreSpec spec = store.getSpec();
    try {
      URI endpoint = endpoint(spec);
      Secret secret = credentialsSecret(client, spec);
      Trust trust = trust(client, spec);
      String version =
          store.getMetadata().getUid()
              + "/"
              + store.getMetadata().getGeneration()
              + "/"
              + (secret == null ? "-" : secret.getMetadata().getResourceVersion())
              + "/"
              + (trust == null ? "-" : trust.version());
      synchronized (clients) {
        Cached cached = clients.get(name);
        if (cached != null && cached.version().equals(version)) {
          return new Store(name, spec, cached.client(), uploads, reservations);
        }
      }
      // Up front, outside the lock (it resolves the host): a clear reason at once. Every
      // connection is judged again by EgressCheckedDns.
      checkEgress(endpoint);
      S3Client fresh =
          build(spec, endpoint, credentials(spec, secret), trust == null ? null : trust.managers());
      synchronized (clients) {
        Cached cached = clients.get(name);
        if (cached != null && cached.version().equals(version)) {
          // Another reconcile built the same client meanwhile.
          fresh.close();
          return new Store(name, spec, cached.client(), uploads, reservations);
        }
        clients.put(name, new Cached(version, fresh));
        if (cached != null) {
          // Requests in flight on the old client fail and are retried by their reconcile.
          cached.client().close();
        }
        return new Store(name, spec, fresh, uploads, reservations);
      }
    } catch (Refusal e) {
      throw new PublishException(
          Reasons.STORE_UNAVAILABLE,
          "object store " + name + " is unavailable: " + e.getMessage(),
          null);
    }
  }

  /** Closes every cached client. */
  @Override
  public void close() {
    synchronized (clients) {
      clients.values().forEach(c -> c.client().close());
      clients.clear();
    }
  }

  private static BloomStore definition(KubernetesClient client, String name)
      throws PublishException {
    BloomStore store = client.resources(BloomStore.class).withName(name).get();
    if (store == null || store.getSpec() == null) {
      throw new PublishException(
          Reasons.STORE_NOT_FOUND,
          "BloomStore " + name + " does not exist; nothing was written",
          null);
    }
    return store;
  }

  static boolean allows(KubernetesClient client, BloomStoreSpec spec, String namespace) {
    BloomStoreSpec.AllowedNamespaces allowed = spec.getAllowedNamespaces();
    if (allowed == null) {
      return false;
    }
    if (allowed.getNames() != null && allowed.getNames().contains(namespace)) {
      return true;
    }
    if (allowed.getSelector() == null) {
      return false;
    }
    Namespace ns = client.namespaces().withName(namespace).get();
    return ns != null
        && NamespaceSelector.matches(allowed.getSelector(), ns.getMetadata().getLabels());
  }

  private static URI endpoint(BloomStoreSpec spec) throws Refusal {
    URI uri;
    try {
      uri = URI.create(spec.getEndpoint());
    } catch (IllegalArgumentException | NullPointerException e) {
      throw new Refusal("endpoint unparsable", e);
    }
    boolean https = "https".equals(uri.getScheme());
    boolean http =
        "http".equals(uri.getScheme()) && Boolean.TRUE.equals(spec.getAllowInsecureEndpoint());
    if (!(https || http) || uri.getHost() == null || uri.getUserInfo() != null) {
      throw new Refusal("endpoint refused", null);
    }
    return uri;
  }

  /** The endpoint is the administrator's, but a compromised definition must not reach the node. */
  private void checkEgress(URI endpoint) throws Refusal {
    try {
      // The resolution every connection of the client makes, made once now.
      dns().resolve(endpoint.getHost());
    } catch (EgressCheckedDns.Refused e) {
      // Logged with the host and the address by EgressCheckedDns.
      throw new Refusal("endpoint refused by the egress policy", null);
    } catch (UnknownHostException e) {
      LOG.warn("object store endpoint host does not resolve: {}", e.getMessage());
      throw new Refusal("endpoint unresolvable", e);
    }
  }

  private EgressCheckedDns dns() {
    return EgressCheckedDns.forStores(egress, settings.resolver());
  }

  /** The CA bundle's trust managers and the version of the object they were read from. */
  private record Trust(String version, TrustManager[] managers) {}

  /** Null: the JVM's default CAs. */
  private Trust trust(KubernetesClient client, BloomStoreSpec spec) throws Refusal {
    BloomStoreSpec.Tls tls = spec.getTls();
    if (tls == null || tls.getCaBundle() == null) {
      return null;
    }
    BloomStoreSpec.CaBundle ref = tls.getCaBundle();
    if (settings.operatorNamespace() == null) {
      LOG.warn(
          "a BloomStore names a CA bundle but the operator namespace is unknown"
              + " (BLOOM_OPERATOR_NAMESPACE)");
      throw new Refusal("CA bundle unavailable", null);
    }
    String key = ref.keyOrDefault();
    String kind = ref.getSecretName() != null ? "Secret" : "ConfigMap";
    byte[] pem;
    String version;
    try {
      if (ref.getSecretName() != null) {
        Secret secret =
            client
                .secrets()
                .inNamespace(settings.operatorNamespace())
                .withName(ref.getSecretName())
                .get();
        if (secret == null) {
          throw new Refusal("CA bundle Secret missing", null);
        }
        String value = value(secret, key);
        pem = value == null ? null : value.getBytes(StandardCharsets.UTF_8);
        version = secret.getMetadata().getResourceVersion();
      } else {
        ConfigMap map =
            client
                .configMaps()
                .inNamespace(settings.operatorNamespace())
                .withName(ref.getConfigMapName())
                .get();
        if (map == null) {
          throw new Refusal("CA bundle ConfigMap missing", null);
        }
        pem = configMapValue(map, key);
        version = map.getMetadata().getResourceVersion();
      }
    } catch (KubernetesClientException e) {
      throw new Refusal("CA bundle " + kind + " unreadable", e);
    }
    if (pem == null) {
      throw new Refusal("CA bundle " + kind + " has no key " + key, null);
    }
    try {
      return new Trust(kind + ":" + version, CaCertificates.parse(pem).trustManagers());
    } catch (IllegalArgumentException e) {
      // Fixed texts ("CA bundle holds no certificate"): nothing of the bundle itself.
      throw new Refusal(e.getMessage(), null);
    }
  }

  private static byte[] configMapValue(ConfigMap map, String key) {
    if (map.getData() != null && map.getData().get(key) != null) {
      return map.getData().get(key).getBytes(StandardCharsets.UTF_8);
    }
    if (map.getBinaryData() != null && map.getBinaryData().get(key) != null) {
      try {
        return Base64.getDecoder().decode(map.getBinaryData().get(key));
      } catch (IllegalArgumentException e) {
        return null;
      }
    }
    return null;
  }

  private Secret credentialsSecret(KubernetesClient client, BloomStoreSpec spec) throws Refusal {
    BloomStoreSpec.Credentials credentials = spec.getCredentials();
    if (credentials == null || credentials.getSecretName() == null) {
      return null;
    }
    if (settings.operatorNamespace() == null) {
      LOG.warn(
          "a BloomStore names a credentials Secret but the operator namespace is unknown"
              + " (BLOOM_OPERATOR_NAMESPACE)");
      throw new Refusal("credentials unavailable", null);
    }
    try {
      Secret secret =
          client
              .secrets()
              .inNamespace(settings.operatorNamespace())
              .withName(credentials.getSecretName())
              .get();
      if (secret == null) {
        throw new Refusal("credentials Secret missing", null);
      }
      return secret;
    } catch (KubernetesClientException e) {
      throw new Refusal("credentials Secret unreadable", e);
    }
  }

  private static AwsCredentialsProvider credentials(BloomStoreSpec spec, Secret secret)
      throws Refusal {
    if (secret == null) {
      return DefaultCredentialsProvider.builder().build();
    }
    String id = value(secret, ACCESS_KEY_ID);
    String key = value(secret, SECRET_ACCESS_KEY);
    if (id == null || key == null) {
      throw new Refusal("credentials Secret incomplete", null);
    }
    return StaticCredentialsProvider.create(AwsBasicCredentials.create(id, key));
  }

  private static String value(Secret secret, String key) {
    if (secret.getData() != null && secret.getData().get(key) != null) {
      try {
        return new String(
                Base64.getDecoder().decode(secret.getData().get(key)), StandardCharsets.UTF_8)
            .strip();
      } catch (IllegalArgumentException e) {
        return null;
      }
    }
    return secret.getStringData() == null ? null : secret.getStringData().get(key);
  }

  private S3Client build(
      BloomStoreSpec spec,
      URI endpoint,
      AwsCredentialsProvider credentials,
      TrustManager[] trustManagers) {
    Apache5HttpClient.Builder http =
        Apache5HttpClient.builder()
            .connectionTimeout(CONNECT_TIMEOUT)
            .socketTimeout(SOCKET_TIMEOUT)
            .dnsResolver(dns())
            // No proxy from the JVM's or the environment's settings (the SDK reads both by
            // default), and every route planned direct to the target whatever a request says.
            .proxyConfiguration(
                ProxyConfiguration.builder()
                    .useSystemPropertyValues(false)
                    .useEnvironmentVariableValues(false)
                    .build())
            .httpRoutePlanner(new DefaultRoutePlanner(DefaultSchemePortResolver.INSTANCE));
    if (trustManagers != null) {
      http.tlsTrustManagersProvider(() -> trustManagers);
    }
    return S3Client.builder()
        .endpointOverride(endpoint)
        .region(Region.of(spec.regionOrDefault()))
        .forcePathStyle(spec.pathStyle())
        .credentialsProvider(credentials)
        .httpClientBuilder(http)
        .overrideConfiguration(
            o ->
                o.apiCallTimeout(settings.requestTimeout())
                    .apiCallAttemptTimeout(settings.requestTimeout().dividedBy(2)))
        // The transport verifies sha256 itself; the SDK's default CRC trailers are what
        // S3-compatible stores most often reject.
        .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
        .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
        .build();
  }
}
