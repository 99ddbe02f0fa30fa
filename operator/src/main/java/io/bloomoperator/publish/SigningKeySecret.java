package io.bloomoperator.publish;

import io.bloomoperator.api.Durations;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.Ed25519Keys;
import io.bloomoperator.snapshot.ManifestSigner;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.InvalidKeyException;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;

/**
 * Where the operator's manifest signing key lives: a Secret in the operator's own namespace whose
 * data key {@value #KEY} holds an Ed25519 private key as PKCS#8 PEM. Read at every publish (one
 * GET), so a rotated Secret signs the next manifest without a restart.
 *
 * @param namespace the operator's namespace
 * @param name the Secret's name
 * @param restampInterval how old a signed manifest's {@code createdAt} may grow before the operator
 *     writes the unchanged version again with a fresh one (re-signed), so that readers with a
 *     maximum manifest age keep accepting it; {@link Duration#ZERO}: never
 */
public record SigningKeySecret(String namespace, String name, Duration restampInterval) {

  /** Data key of the PEM private key in the Secret. */
  public static final String KEY = "ed25519.pem";

  /**
   * One manifest write per filter and hour, no chunk written: readers may then set a maximum
   * manifest age of a few hours.
   */
  public static final Duration DEFAULT_RESTAMP_INTERVAL = Duration.ofHours(1);

  public SigningKeySecret {
    if (restampInterval == null || restampInterval.isNegative()) {
      throw new IllegalArgumentException("the re-stamp interval must not be negative");
    }
  }

  /**
   * The Secret {@code namespace}/{@code name}, re-stamping every {@link #DEFAULT_RESTAMP_INTERVAL}.
   */
  public SigningKeySecret(String namespace, String name) {
    this(namespace, name, DEFAULT_RESTAMP_INTERVAL);
  }

  /** Where a pod finds the namespace of its service account. */
  public static final Path SERVICE_ACCOUNT_NAMESPACE =
      Path.of("/var/run/secrets/kubernetes.io/serviceaccount/namespace");

  /**
   * From BLOOM_SIGNING_KEY_SECRET (the Secret's name; unset: manifests are not signed), the
   * operator namespace (BLOOM_OPERATOR_NAMESPACE, else POD_NAMESPACE, else the service account's
   * namespace file) and BLOOM_MANIFEST_RESTAMP_INTERVAL (a duration such as {@code 1h}; {@code 0}
   * never re-stamps).
   *
   * @return null when signing is not configured
   * @throws IllegalArgumentException if a Secret is named but no namespace can be found
   */
  public static SigningKeySecret fromEnvironment(Map<String, String> env, Path namespaceFile) {
    String name = env.get("BLOOM_SIGNING_KEY_SECRET");
    if (name == null || name.isBlank()) {
      return null;
    }
    String namespace = env.get("BLOOM_OPERATOR_NAMESPACE");
    if (namespace == null || namespace.isBlank()) {
      namespace = env.get("POD_NAMESPACE");
    }
    if ((namespace == null || namespace.isBlank()) && Files.isReadable(namespaceFile)) {
      try {
        namespace = Files.readString(namespaceFile, StandardCharsets.UTF_8).strip();
      } catch (IOException e) {
        namespace = null;
      }
    }
    if (namespace == null || namespace.isBlank()) {
      throw new IllegalArgumentException(
          "BLOOM_SIGNING_KEY_SECRET is set but the operator's "
              + "namespace is unknown: set BLOOM_OPERATOR_NAMESPACE");
    }
    return new SigningKeySecret(namespace.strip(), name.strip(), restampInterval(env));
  }

  private static Duration restampInterval(Map<String, String> env) {
    String raw = env.get("BLOOM_MANIFEST_RESTAMP_INTERVAL");
    if (raw == null || raw.isBlank()) {
      return DEFAULT_RESTAMP_INTERVAL;
    }
    String text = raw.strip();
    if (text.matches("0+(ms|s|m|h)?")) {
      return Duration.ZERO;
    }
    try {
      return Durations.parse(text);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("BLOOM_MANIFEST_RESTAMP_INTERVAL: " + e.getMessage(), e);
    }
  }

  /**
   * Reads the Secret and returns a signer for its key. Messages name the Secret and what is wrong
   * with it, never its content.
   *
   * @throws PublishException with reason {@link PublishException#SIGNING_KEY} if the Secret cannot
   *     be read, lacks the key or does not hold an Ed25519 PKCS#8 PEM private key
   */
  public ManifestSigner load(KubernetesClient client) throws PublishException {
    String where = "signing key Secret " + namespace + "/" + name;
    Secret secret;
    try {
      secret = client.secrets().inNamespace(namespace).withName(name).get();
    } catch (KubernetesClientException e) {
      throw new PublishException(
          Reasons.SIGNING_KEY_UNAVAILABLE,
          where + " could not be read (HTTP " + e.getCode() + "); nothing was published",
          e);
    }
    if (secret == null) {
      throw new PublishException(
          Reasons.SIGNING_KEY_UNAVAILABLE, where + " does not exist; nothing was published", null);
    }
    String encoded = secret.getData() == null ? null : secret.getData().get(KEY);
    if (encoded == null) {
      throw new PublishException(
          Reasons.SIGNING_KEY_UNAVAILABLE,
          where + " has no data key '" + KEY + "'; nothing was published",
          null);
    }
    try {
      String pem = new String(Base64.getDecoder().decode(encoded), StandardCharsets.UTF_8);
      return new ManifestSigner(Ed25519Keys.readPrivateKey(pem));
    } catch (IllegalArgumentException | InvalidKeyException e) {
      // No cause: its message could quote key material.
      throw new PublishException(
          Reasons.SIGNING_KEY_UNAVAILABLE,
          where
              + " key '"
              + KEY
              + "' is not an Ed25519 private key in PKCS#8 PEM form; nothing was published",
          null);
    }
  }
}
