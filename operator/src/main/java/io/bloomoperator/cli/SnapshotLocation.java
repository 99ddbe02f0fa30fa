package io.bloomoperator.cli;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.ConfigMapChunkStore;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.bloomoperator.snapshot.TrustedKeys;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * Where {@code inspect} and {@code query} read a snapshot: a directory written by {@code build}, or
 * the cluster ({@code --namespace} selects that mode). Shared as a picocli mixin.
 */
final class SnapshotLocation {

  @Option(
      names = {"-n", "--namespace"},
      paramLabel = "<ns>",
      description = "Read the snapshot from this namespace of the cluster instead of a directory.")
  String namespace;

  @Option(
      names = "--name",
      paramLabel = "<filter>",
      description =
          "The filter's name. Required with --namespace; with a directory it picks "
              + "the filter when the directory holds several.")
  String name;

  @Option(
      names = "--kubeconfig",
      paramLabel = "<path>",
      description =
          "Kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or the pod's "
              + "service account). Only with --namespace.")
  Path kubeconfig;

  @Option(
      names = "--context",
      paramLabel = "<context>",
      description = "Kubeconfig context to use (default: the current one). Only with --namespace.")
  String context;

  @Option(
      names = "--version",
      paramLabel = "<n>",
      description =
          "An earlier version the published delta chain still holds (its base or any delta's "
              + "version), verified against that version's own sha256. Default: the current one.")
  Long version;

  @Option(
      names = "--trusted-key",
      paramLabel = "<pem>",
      description =
          "Ed25519 public key (PEM) whose manifest signatures are accepted; repeat for "
              + "several. With it, an unsigned manifest or a bad signature fails verification, as in "
              + "a sidecar configured with trustedKey().")
  List<Path> trustedKeys = List.of();

  /** Where the chunks of a filter whose manifest names an object store are read. */
  @Mixin StoreOptions store = new StoreOptions();

  boolean fromCluster() {
    return namespace != null;
  }

  /** Checks the combination of options; {@code dir} is the positional directory, if any. */
  void validate(CommandSpec spec, Path dir) {
    if (fromCluster()) {
      if (dir != null) {
        throw new ParameterException(
            spec.commandLine(), "give either a snapshot directory or --namespace/--name, not both");
      }
      if (name == null) {
        throw new ParameterException(spec.commandLine(), "--name is required with --namespace");
      }
    } else {
      if (dir == null) {
        throw new ParameterException(
            spec.commandLine(),
            "give a snapshot directory, or --namespace and --name to read from the cluster");
      }
      if (kubeconfig != null || context != null || store.given()) {
        throw new ParameterException(
            spec.commandLine(),
            "--kubeconfig, --context and --store-* only apply with --namespace");
      }
    }
  }

  /** Loads and verifies the snapshot (everything the decoder checks). */
  VerifiedSnapshot load(Path dir) throws CliException {
    TrustedKeys trusted = ManifestTrust.read(trustedKeys);
    if (!fromCluster()) {
      return new SnapshotFiles(dir).read(name, trusted, version);
    }
    Config config = KubeconfigFile.config(kubeconfig, context);
    try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build()) {
      return fromCluster(client, namespace, name, trusted, version, store);
    } catch (KubernetesClientException e) {
      throw new CliException(
          "reading "
              + namespace
              + "/"
              + SnapshotNames.manifestName(name)
              + " from "
              + config.getMasterUrl()
              + " failed: "
              + e.getMessage(),
          e);
    }
  }

  /**
   * Reads the manifest ConfigMap, then each chunk ConfigMap by name (never a list), verifying them
   * as sidecar-lib does; the chunks of a manifest that names an object store come from the store
   * {@code store} gives.
   */
  static VerifiedSnapshot fromCluster(
      KubernetesClient client,
      String namespace,
      String filterName,
      TrustedKeys trusted,
      Long version,
      StoreOptions store)
      throws CliException {
    String manifestName = SnapshotNames.manifestName(filterName);
    ConfigMap configMap = client.configMaps().inNamespace(namespace).withName(manifestName).get();
    if (configMap == null) {
      throw new CliException(
          "ConfigMap "
              + namespace
              + "/"
              + manifestName
              + " not found: no snapshot of filter '"
              + filterName
              + "' in namespace "
              + namespace);
    }
    String json = SnapshotConfigMaps.manifestJson(configMap);
    if (json == null) {
      throw new CliException(
          "ConfigMap "
              + namespace
              + "/"
              + manifestName
              + " is not a snapshot manifest: it has no data key '"
              + SnapshotNames.MANIFEST_DATA_KEY
              + "'");
    }
    try {
      Manifest manifest = Manifest.fromJson(json);
      if (!filterName.equals(manifest.filterName())) {
        throw new SnapshotVerificationException(
            "manifest "
                + namespace
                + "/"
                + manifestName
                + " is for filter '"
                + manifest.filterName()
                + "', expected '"
                + filterName
                + "'");
      }
      String signature =
          ManifestTrust.check(
              manifest, json, SnapshotConfigMaps.signatureData(configMap), namespace, trusted);
      long wanted = version == null ? manifest.version() : version;
      String where = "ConfigMap " + namespace + "/" + manifestName;
      BloomFilterBits bits;
      if (manifest.store() == null) {
        bits =
            SnapshotDecoder.decodeVersion(
                manifest, wanted, ConfigMapChunkStore.reader(client, namespace));
      } else {
        try (S3Client s3 = store.client(manifest.store())) {
          bits =
              SnapshotDecoder.decodeVersion(
                  manifest, wanted, store.chunks(s3, manifest.store(), namespace, filterName));
        } catch (software.amazon.awssdk.core.exception.SdkException e) {
          throw new CliException(
              "reading object store '" + manifest.store() + "' failed: " + e.getMessage(), e);
        }
        where += " (chunks in object store " + manifest.store() + ")";
      }
      return new VerifiedSnapshot(manifest, bits, where, signature);
    } catch (SnapshotVerificationException e) {
      throw new CliException("verification failed: " + e.getMessage(), e);
    } catch (IOException e) {
      throw new CliException("verification failed: " + e.getMessage(), e);
    }
  }
}
