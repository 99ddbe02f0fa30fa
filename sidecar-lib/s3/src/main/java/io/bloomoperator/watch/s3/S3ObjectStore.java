package io.bloomoperator.watch.s3;

import io.bloomoperator.snapshot.CaCertificates;
import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.ObjectStoreException;
import io.bloomoperator.snapshot.StoreObjectKeys;
import io.bloomoperator.watch.ObjectStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * An S3-compatible object store (AWS S3, Ceph RGW, GCS's XML API, versitygw, ...) that a reader
 * fetches snapshot chunks from, configured by the application alone: endpoint, bucket, key prefix,
 * region, addressing and read credentials never come from a manifest, which names only the store.
 * Register it with {@link io.bloomoperator.watch.BloomFilterWatcher.Builder#objectStore(String,
 * ObjectStore)} under the name the operator's store has:
 *
 * <pre>{@code
 * S3ObjectStore store = S3ObjectStore.builder()
 *     .endpoint(URI.create("https://s3.eu-west-1.amazonaws.com"))
 *     .bucket("bloom-snapshots")
 *     .prefix("bloom")
 *     .region("eu-west-1")
 *     .build(); // read credentials: the SDK's default chain (IRSA, workload identity, ...)
 * LiveBloomFilter<String> ids =
 *     BloomFilterWatcher.builder(client, "shop", "product-ids", LiveKeyType.STRING)
 *         .objectStore("primary", store)
 *         .start();
 * }</pre>
 *
 * <p>A chunk is the object {@link StoreObjectKeys#key} of the reader's own namespace and filter
 * (the reader builds the keys; a manifest naming a chunk that has no such key is refused before
 * anything is fetched). Chunks are fetched ahead of the decoder by {@link Builder#parallelism(int)}
 * threads shared by every filter of this store, each with ranged GETs of exactly the bytes the
 * manifest announces (at most that many are ever held for a chunk), and a download that breaks is
 * resumed from the byte where it stopped. The decoder verifies each chunk's SHA-256 and the whole
 * payload's before anything is served.
 *
 * <p>Thread-safe. The application closes it ({@link #close()}) after the filters that use it.
 */
public final class S3ObjectStore implements ObjectStore, AutoCloseable {

  /** Default number of chunks fetched at once per store. */
  public static final int DEFAULT_PARALLELISM = 4;

  /** Default number of attempts at a chunk that make no progress before the load fails. */
  public static final int DEFAULT_ATTEMPTS = 4;

  private static final AtomicInteger STORES = new AtomicInteger();

  private final S3Client client;
  private final AwsCredentialsProvider credentials;
  private final String bucket;
  private final String prefix;
  private final int parallelism;
  private final int attempts;
  private final ExecutorService fetchers;
  private final String description;

  private S3ObjectStore(Builder builder) {
    this.credentials = builder.credentials;
    this.bucket = builder.bucket;
    this.prefix = builder.prefix;
    this.parallelism = builder.parallelism;
    this.attempts = builder.attempts;
    this.description = builder.endpoint + " bucket " + bucket;
    UrlConnectionHttpClient.Builder http =
        UrlConnectionHttpClient.builder()
            .connectionTimeout(builder.connectTimeout)
            .socketTimeout(builder.readTimeout);
    if (builder.caCertificates != null) {
      CaCertificates ca = builder.caCertificates;
      http.tlsTrustManagersProvider(ca::trustManagers);
    }
    this.client =
        S3Client.builder()
            .endpointOverride(builder.endpoint)
            .region(Region.of(builder.region))
            .forcePathStyle(builder.pathStyle)
            .credentialsProvider(credentials)
            .httpClientBuilder(http)
            // The decoder verifies SHA-256 per chunk and per payload; a ranged GET has no
            // whole-object checksum to validate, and S3-compatible stores vary in what they send.
            .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
            .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
            .build();
    int id = STORES.incrementAndGet();
    AtomicInteger threads = new AtomicInteger();
    this.fetchers =
        Executors.newFixedThreadPool(
            parallelism,
            r -> {
              Thread t = new Thread(r, "bloom-s3-" + id + "-fetch-" + threads.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
  }

  /** Options of a store; finish with {@link Builder#build()}. */
  public static Builder builder() {
    return new Builder();
  }

  @Override
  public String prefix() {
    return prefix;
  }

  /**
   * Starts fetching {@code chunks} (their keys built and checked by the reader).
   *
   * @throws ObjectStoreException ({@code STORE_DENIED}) if no credentials can be found
   */
  @Override
  public S3ChunkSource open(List<Chunk> chunks) throws ObjectStoreException {
    try {
      // Resolved once up front: "no credentials at all" is then a clear reason of its own, not
      // the first of many failed GETs.
      credentials.resolveCredentials();
    } catch (SdkClientException e) {
      throw new ObjectStoreException(
          LoadFailureReason.STORE_DENIED,
          "no credentials to read object store " + description + ": " + e.getMessage(),
          e);
    }
    return new S3ChunkSource(this, chunks);
  }

  S3Client client() {
    return client;
  }

  String bucket() {
    return bucket;
  }

  int parallelism() {
    return parallelism;
  }

  int attempts() {
    return attempts;
  }

  ExecutorService fetchers() {
    return fetchers;
  }

  /** Endpoint and bucket, for messages (never credentials). */
  String description() {
    return description;
  }

  /** Stops the fetch threads and closes the S3 client. */
  @Override
  public void close() {
    fetchers.shutdownNow();
    client.close();
  }

  @Override
  public String toString() {
    return "S3ObjectStore(" + description + ", prefix '" + prefix + "')";
  }

  /**
   * Options of an {@link S3ObjectStore}. Each setter checks its argument at once. Required: {@link
   * #endpoint} and {@link #bucket}.
   */
  public static final class Builder {
    private URI endpoint;
    private String bucket;
    private String prefix = "bloom";
    private String region = "us-east-1";
    private boolean pathStyle = true;
    private AwsCredentialsProvider credentials;
    private CaCertificates caCertificates;
    private Duration connectTimeout = Duration.ofSeconds(5);
    private Duration readTimeout = Duration.ofSeconds(30);
    private int parallelism = DEFAULT_PARALLELISM;
    private int attempts = DEFAULT_ATTEMPTS;

    private Builder() {}

    /**
     * The store's endpoint, an {@code https} (or, for a store on the same host, {@code http}) URL.
     */
    public Builder endpoint(URI endpoint) {
      Objects.requireNonNull(endpoint, "endpoint");
      String scheme = endpoint.getScheme();
      if (!"https".equals(scheme) && !"http".equals(scheme)) {
        throw new IllegalArgumentException("endpoint must be an http or https URL");
      }
      if (endpoint.getHost() == null) {
        throw new IllegalArgumentException("endpoint has no host");
      }
      this.endpoint = endpoint;
      return this;
    }

    /** The bucket (the operator's store writes there too). */
    public Builder bucket(String bucket) {
      if (bucket == null || !bucket.matches("[a-z0-9][-.a-z0-9]{1,61}[a-z0-9]")) {
        throw new IllegalArgumentException("bucket must be an S3 bucket name (3-63 characters)");
      }
      this.bucket = bucket;
      return this;
    }

    /**
     * The key prefix of the store, as the operator's store definition has it; default {@code
     * bloom}, empty for none.
     */
    public Builder prefix(String prefix) {
      if (!StoreObjectKeys.isStorePrefix(prefix)) {
        throw new IllegalArgumentException(
            "prefix must be '/'-separated segments of letters, digits, '-', '.' and '_'");
      }
      this.prefix = prefix;
      return this;
    }

    /** The region requests are signed for; default {@code us-east-1}. */
    public Builder region(String region) {
      if (region == null || region.isBlank()) {
        throw new IllegalArgumentException("region must not be empty");
      }
      this.region = region;
      return this;
    }

    /**
     * Path-style addressing ({@code endpoint/bucket/key}, the default: Ceph, versitygw and AWS all
     * serve it) or, with false, virtual-host style ({@code bucket.endpoint/key}).
     */
    public Builder pathStyle(boolean pathStyle) {
      this.pathStyle = pathStyle;
      return this;
    }

    /**
     * Reads with the SDK's default credential chain (environment, web identity token as with IRSA
     * or workload identity, instance profile, ...); the default. Web identity needs the SDK's
     * {@code sts} module on the class path.
     */
    public Builder defaultCredentials() {
      this.credentials = null;
      return this;
    }

    /**
     * Reads with the access key pair in two files, e.g. the keys of a Secret of the application's
     * own namespace mounted as a volume; read at each request, so a rotated Secret is used without
     * a restart. Give these credentials read access only ({@code s3:GetObject} on the filters'
     * directories).
     */
    public Builder accessKeyFiles(Path accessKeyIdFile, Path secretAccessKeyFile) {
      this.credentials =
          new FileCredentialsProvider(
              Objects.requireNonNull(accessKeyIdFile, "accessKeyIdFile"),
              Objects.requireNonNull(secretAccessKeyFile, "secretAccessKeyFile"));
      return this;
    }

    /** Any credentials provider of the SDK (e.g. a static pair in tests). */
    public Builder credentials(AwsCredentialsProvider provider) {
      this.credentials = Objects.requireNonNull(provider, "provider");
      return this;
    }

    /**
     * Verifies the store's TLS certificate with the CA certificates of a PEM bundle ({@code
     * ca.crt}, e.g. a ConfigMap mounted as a volume; the BloomStore's {@code spec.tls.caBundle})
     * <em>instead of</em> the JVM's default CAs. Read now, once: a new CA needs a new store (or a
     * restart). Default: the JVM's default CAs.
     *
     * @throws UncheckedIOException if the file cannot be read
     * @throws IllegalArgumentException if it is no PEM bundle of certificates
     */
    public Builder caCertificatesFile(Path pemBundle) {
      try {
        this.caCertificates = CaCertificates.read(Objects.requireNonNull(pemBundle, "pemBundle"));
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read CA bundle " + pemBundle, e);
      }
      return this;
    }

    /** Connection and read (socket) timeouts; default 5 s and 30 s. */
    public Builder timeouts(Duration connect, Duration read) {
      if (connect.isNegative() || connect.isZero() || read.isNegative() || read.isZero()) {
        throw new IllegalArgumentException("timeouts must be positive");
      }
      this.connectTimeout = connect;
      this.readTimeout = read;
      return this;
    }

    /**
     * How many chunks are fetched at once, by as many threads shared by every filter of this store;
     * each holds at most one chunk (1 MiB). Default {@value #DEFAULT_PARALLELISM}.
     */
    public Builder parallelism(int threads) {
      if (threads < 1 || threads > 64) {
        throw new IllegalArgumentException("parallelism must be between 1 and 64");
      }
      this.parallelism = threads;
      return this;
    }

    /**
     * How many attempts at a chunk may fail without receiving a byte before the load fails (and is
     * retried later with the watcher's backoff); an attempt that received bytes resumes from there
     * and does not count. Default {@value #DEFAULT_ATTEMPTS}.
     */
    public Builder attempts(int attempts) {
      if (attempts < 1 || attempts > 100) {
        throw new IllegalArgumentException("attempts must be between 1 and 100");
      }
      this.attempts = attempts;
      return this;
    }

    /**
     * The store.
     *
     * @throws IllegalStateException if endpoint or bucket is not set
     */
    public S3ObjectStore build() {
      if (endpoint == null || bucket == null) {
        throw new IllegalStateException("endpoint and bucket are required");
      }
      if (credentials == null) {
        credentials = DefaultCredentialsProvider.builder().build();
      }
      return new S3ObjectStore(this);
    }
  }
}
