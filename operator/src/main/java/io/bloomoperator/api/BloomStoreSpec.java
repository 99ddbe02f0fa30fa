package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.LabelSelector;
import java.util.ArrayList;
import java.util.List;

/**
 * An object store as an administrator defines it. Everything here is the administrator's: the
 * operator reads the credentials Secret only from its own namespace, and judges the endpoint by its
 * egress policy like an HTTP source's URL.
 */
@ValidationRule(
    value = "self.endpoint.startsWith('https://') || self.allowInsecureEndpoint == true",
    message = "endpoint must be https:// unless allowInsecureEndpoint is true")
@ValidationRule(
    value = "!has(self.tls) || self.endpoint.startsWith('https://')",
    message = "tls needs an https:// endpoint")
public class BloomStoreSpec {

  public static final String DEFAULT_PREFIX = "bloom";
  public static final String DEFAULT_REGION = "us-east-1";

  /** 10 GiB. */
  public static final long DEFAULT_NAMESPACE_BUDGET_BYTES = 10L * 1024 * 1024 * 1024;

  @Required
  @Pattern("^https?://[^/?#@\\s]+/?$")
  @Size(max = 2048)
  @JsonPropertyDescription(
      "The S3 API endpoint, e.g. https://s3.eu-west-1.amazonaws.com or https://rgw.example:8443."
          + " No user info, path or query.")
  private String endpoint;

  @JsonPropertyDescription(
      "Allow an http:// endpoint (credentials and chunks travel in clear text). Default false.")
  private Boolean allowInsecureEndpoint;

  @Required
  @Pattern("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
  @JsonPropertyDescription("The bucket; it must exist.")
  private String bucket;

  @Pattern("^([a-zA-Z0-9_][-._a-zA-Z0-9]*)(/[a-zA-Z0-9_][-._a-zA-Z0-9]*)*$")
  @Size(max = 256)
  @JsonPropertyDescription(
      "Key prefix of every object (default bloom): <prefix>/<namespace>/<filter>/<chunk>.")
  private String prefix;

  @Pattern("^[a-z0-9-]{1,32}$")
  @JsonPropertyDescription("The region requests are signed for (default us-east-1).")
  private String region;

  @Pattern("^(path|virtual)$")
  @JsonPropertyDescription(
      "path (default): https://endpoint/bucket/key, which every S3-compatible store serves;"
          + " virtual: https://bucket.endpoint/key.")
  private String addressing;

  @JsonPropertyDescription(
      "How the store's TLS certificate is verified. Default: by the CAs the operator's JVM"
          + " trusts.")
  private Tls tls;

  @Required
  @JsonPropertyDescription("The operator's write credentials for this store.")
  private Credentials credentials;

  @JsonPropertyDescription("Namespaces whose BloomFilters may use this store. Empty: none may.")
  private AllowedNamespaces allowedNamespaces;

  @Min(0)
  @JsonPropertyDescription(
      "Bytes the objects of one namespace may hold in this store (default 10 GiB); a publish"
          + " over it gets Ready=False StoreBudgetExceeded.")
  private Long namespaceBudgetBytes;

  @Min(1)
  @JsonPropertyDescription(
      "Bytes: BloomFilters that name no store and whose snapshot is larger than this go to this"
          + " store, if it allows their namespace. Should one store per namespace set it; if"
          + " several do, the one whose name sorts first is used.")
  private Long defaultForSnapshotsOver;

  /** The operator's credentials: a Secret in its own namespace, or the SDK's default chain. */
  @ValidationRule(
      value = "has(self.secretName) != (has(self.defaultChain) && self.defaultChain)",
      message = "set exactly one of secretName and defaultChain: true")
  public static class Credentials {

    @Pattern("^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
    @JsonPropertyDescription(
        "A Secret in the operator's namespace with keys accessKeyId and secretAccessKey.")
    private String secretName;

    @JsonPropertyDescription(
        "Use the SDK's default credential chain (IRSA, workload identity, instance profile,"
            + " AWS_* environment variables of the operator).")
    private Boolean defaultChain;

    public String getSecretName() {
      return secretName;
    }

    public void setSecretName(String secretName) {
      this.secretName = secretName;
    }

    public Boolean getDefaultChain() {
      return defaultChain;
    }

    public void setDefaultChain(Boolean defaultChain) {
      this.defaultChain = defaultChain;
    }
  }

  /** How the store's certificate is verified. */
  public static class Tls {

    @Required
    @JsonPropertyDescription(
        "PEM CA certificates that verify the store's certificate, instead of the JVM's default"
            + " CAs.")
    private CaBundle caBundle;

    public CaBundle getCaBundle() {
      return caBundle;
    }

    public void setCaBundle(CaBundle caBundle) {
      this.caBundle = caBundle;
    }
  }

  /**
   * A PEM CA bundle in a ConfigMap or a Secret of the operator's namespace, referenced like the
   * credentials Secret: a tenant namespace is never read.
   */
  @ValidationRule(
      value = "has(self.configMapName) != has(self.secretName)",
      message = "set exactly one of configMapName and secretName")
  public static class CaBundle {

    /** The key read when none is given, as in kube-root-ca.crt and cert-manager Secrets. */
    public static final String DEFAULT_KEY = "ca.crt";

    @Pattern("^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
    @JsonPropertyDescription("A ConfigMap in the operator's namespace holding the bundle.")
    private String configMapName;

    @Pattern("^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
    @JsonPropertyDescription("A Secret in the operator's namespace holding the bundle.")
    private String secretName;

    @Pattern("^[-._a-zA-Z0-9]{1,253}$")
    @JsonPropertyDescription("The key holding the PEM bundle (default ca.crt).")
    private String key;

    public String getConfigMapName() {
      return configMapName;
    }

    public void setConfigMapName(String configMapName) {
      this.configMapName = configMapName;
    }

    public String getSecretName() {
      return secretName;
    }

    public void setSecretName(String secretName) {
      this.secretName = secretName;
    }

    public String getKey() {
      return key;
    }

    public void setKey(String key) {
      this.key = key;
    }

    /** The key, defaulted. */
    public String keyOrDefault() {
      return key == null ? DEFAULT_KEY : key;
    }
  }

  /** Which namespaces may use the store: listed by name, or selected by labels, or both. */
  public static class AllowedNamespaces {

    @Size(max = 1000)
    @JsonPropertyDescription("Namespaces allowed by name.")
    private List<String> names = new ArrayList<>();

    @JsonPropertyDescription("Namespaces allowed by their labels.")
    private LabelSelector selector;

    public List<String> getNames() {
      return names;
    }

    public void setNames(List<String> names) {
      this.names = names;
    }

    public LabelSelector getSelector() {
      return selector;
    }

    public void setSelector(LabelSelector selector) {
      this.selector = selector;
    }
  }

  public String getEndpoint() {
    return endpoint;
  }

  public void setEndpoint(String endpoint) {
    this.endpoint = endpoint;
  }

  public Boolean getAllowInsecureEndpoint() {
    return allowInsecureEndpoint;
  }

  public void setAllowInsecureEndpoint(Boolean allowInsecureEndpoint) {
    this.allowInsecureEndpoint = allowInsecureEndpoint;
  }

  public String getBucket() {
    return bucket;
  }

  public void setBucket(String bucket) {
    this.bucket = bucket;
  }

  public String getPrefix() {
    return prefix;
  }

  public void setPrefix(String prefix) {
    this.prefix = prefix;
  }

  public String getRegion() {
    return region;
  }

  public void setRegion(String region) {
    this.region = region;
  }

  public String getAddressing() {
    return addressing;
  }

  public void setAddressing(String addressing) {
    this.addressing = addressing;
  }

  public Tls getTls() {
    return tls;
  }

  public void setTls(Tls tls) {
    this.tls = tls;
  }

  public Credentials getCredentials() {
    return credentials;
  }

  public void setCredentials(Credentials credentials) {
    this.credentials = credentials;
  }

  public AllowedNamespaces getAllowedNamespaces() {
    return allowedNamespaces;
  }

  public void setAllowedNamespaces(AllowedNamespaces allowedNamespaces) {
    this.allowedNamespaces = allowedNamespaces;
  }

  public Long getNamespaceBudgetBytes() {
    return namespaceBudgetBytes;
  }

  public void setNamespaceBudgetBytes(Long namespaceBudgetBytes) {
    this.namespaceBudgetBytes = namespaceBudgetBytes;
  }

  public Long getDefaultForSnapshotsOver() {
    return defaultForSnapshotsOver;
  }

  public void setDefaultForSnapshotsOver(Long defaultForSnapshotsOver) {
    this.defaultForSnapshotsOver = defaultForSnapshotsOver;
  }

  /** The key prefix, defaulted. */
  public String prefixOrDefault() {
    return prefix == null ? DEFAULT_PREFIX : prefix;
  }

  /** The region, defaulted. */
  public String regionOrDefault() {
    return region == null ? DEFAULT_REGION : region;
  }

  /** Whether requests address the bucket in the path (the default). */
  public boolean pathStyle() {
    return !"virtual".equals(addressing);
  }

  /** The namespace budget, defaulted. */
  public long namespaceBudgetOrDefault() {
    return namespaceBudgetBytes == null ? DEFAULT_NAMESPACE_BUDGET_BYTES : namespaceBudgetBytes;
  }
}
