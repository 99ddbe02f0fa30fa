package io.bloomoperator.lookup;

import io.bloomoperator.watch.ObjectStore;
import io.bloomoperator.watch.s3.S3ObjectStore;

/**
 * Builds sidecar-lib's {@link S3ObjectStore} from an {@link ObjectStoreSpec}. The only class of the
 * sidecar that names the AWS SDK: it is loaded (and the SDK's classes with it) only when a store is
 * configured, so a sidecar that reads ConfigMaps alone spends no start-up time or metaspace on the
 * SDK; its jars are only bytes in the image (see the pom).
 */
final class S3Stores {

  private S3Stores() {}

  /**
   * The store of {@code spec} (an {@link S3ObjectStore}, {@link AutoCloseable}); the caller closes
   * it after the filters that use it. Typed as sidecar-lib's interface so that its callers' classes
   * never name the SDK.
   *
   * @throws IllegalArgumentException if sidecar-lib refuses a setting, or the CA file cannot be
   *     read
   */
  static ObjectStore open(ObjectStoreSpec spec) {
    S3ObjectStore.Builder builder =
        S3ObjectStore.builder().endpoint(spec.endpoint()).bucket(spec.bucket());
    spec.prefix().ifPresent(builder::prefix);
    spec.region().ifPresent(builder::region);
    builder.pathStyle(spec.pathStyle());
    if (spec.accessKeyIdFile().isPresent()) {
      // Files only, read at each request by sidecar-lib: the values never pass through here.
      builder.accessKeyFiles(spec.accessKeyIdFile().get(), spec.secretAccessKeyFile().get());
    } else {
      builder.defaultCredentials();
    }
    if (spec.caFile().isPresent()) {
      try {
        builder.caCertificatesFile(spec.caFile().get());
      } catch (java.io.UncheckedIOException e) {
        throw new IllegalArgumentException(
            "object store '" + spec.name() + "': cannot read ca-file " + spec.caFile().get());
      }
    }
    if (spec.connectTimeout().isPresent() || spec.readTimeout().isPresent()) {
      builder.timeouts(
          spec.connectTimeout().orElse(java.time.Duration.ofSeconds(5)),
          spec.readTimeout().orElse(java.time.Duration.ofSeconds(30)));
    }
    spec.parallelism().ifPresent(builder::parallelism);
    spec.attempts().ifPresent(builder::attempts);
    return builder.build();
  }
}
