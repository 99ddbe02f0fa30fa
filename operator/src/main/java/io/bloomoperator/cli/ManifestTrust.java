package io.bloomoperator.cli;

import io.bloomoperator.snapshot.Ed25519Keys;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.ManifestSignature;
import io.bloomoperator.snapshot.SnapshotLimits;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.bloomoperator.snapshot.TrustedKeys;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.InvalidKeyException;
import java.security.PublicKey;
import java.util.ArrayList;
import java.util.List;

/**
 * The checks sidecar-lib makes on a manifest before it fetches a chunk (limits, the filter's own
 * chunk names, a trusted signature), for {@code inspect} and {@code query}.
 */
final class ManifestTrust {

  private ManifestTrust() {}

  /** Reads PEM public keys ({@code --trusted-key}). */
  static TrustedKeys read(List<Path> files) throws CliException {
    List<PublicKey> keys = new ArrayList<>();
    for (Path file : files) {
      try {
        keys.add(Ed25519Keys.readPublicKey(Files.readString(file, StandardCharsets.UTF_8)));
      } catch (IOException e) {
        throw new CliException("cannot read --trusted-key " + file + ": " + e.getMessage(), e);
      } catch (InvalidKeyException e) {
        throw new CliException(
            "--trusted-key " + file + " is not an Ed25519 public key in PEM " + "(X.509) form", e);
      }
    }
    return TrustedKeys.of(keys);
  }

  /**
   * Checks {@code manifest} (parsed from {@code json}) as a reader of {@code namespace} trusting
   * {@code trusted} would, and describes its signature.
   *
   * @param namespace where the manifest is published; may be null only when no key is trusted
   * @return "unsigned", or "Ed25519 key <id>" plus whether it was verified
   * @throws CliException if the manifest would be refused
   */
  static String check(
      Manifest manifest, String json, String signature, String namespace, TrustedKeys trusted)
      throws CliException {
    try {
      if (!trusted.isEmpty()) {
        if (namespace == null) {
          throw new CliException(
              "cannot verify the signature: the manifest has no namespace "
                  + "(build with --namespace, or read it from the cluster)");
        }
        trusted.verify(namespace, json, signature);
      }
      SnapshotLimits.forThisHeap().check(manifest, manifest.filterName());
      if (signature == null) {
        return "unsigned";
      }
      String keyId = ManifestSignature.fromData(signature).keyId();
      return "Ed25519 key "
          + keyId
          + (trusted.isEmpty()
              ? " (not verified: no --trusted-key)"
              : " (verified for namespace " + namespace + ")");
    } catch (SnapshotVerificationException e) {
      throw new CliException("verification failed: " + e.getMessage(), e);
    }
  }
}
