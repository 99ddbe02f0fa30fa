package io.bloomoperator.objectstore;

import io.bloomoperator.publish.StoreUnavailableException;
import io.bloomoperator.snapshot.ChunkStore;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.StoreObjectKeys;
import java.io.IOException;
import java.io.InputStream;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * One filter's chunks as objects of an S3-compatible store, at the keys {@link StoreObjectKeys}
 * gives: {@code <prefix>/<namespace>/<filter>/<chunk name>.<sha256>}. Keys hold the digest, so an
 * object is never overwritten: a create is a PUT with {@code If-None-Match: *}, and its 412 means
 * these very bytes are there already.
 *
 * <p>Objects have no owner reference: the filter's directory is what it owns, and of it only the
 * keys that name one of the filter's own chunks ({@link #partOf}). Clean-ups never delete anything
 * else (a key further down, e.g. another store's objects when two stores share a bucket and one's
 * prefix lies inside the other's; a file someone else put there), whichever store they were pointed
 * at. They delete only objects older than a minimum age, so that an upload still in progress (of
 * another replica that has not yet noticed it lost the lease) is never taken for a leftover.
 *
 * <p>Every store failure becomes a {@link StoreUnavailableException} naming only the store.
 */
public final class S3ChunkStore implements ChunkStore {

  private static final Logger LOG = LoggerFactory.getLogger(S3ChunkStore.class);

  /** Keys per list page (S3's maximum). */
  static final int PAGE_SIZE = 1000;

  private final S3Client s3;
  private final String storeName;
  private final String bucket;
  private final String directory;
  private final String filterName;
  private final Duration minAge;
  private final Clock clock;

  /**
   * @param minAge how old an object must be before {@link #deleteExcept} removes it
   */
  public S3ChunkStore(
      S3Client s3,
      String storeName,
      String bucket,
      String storePrefix,
      String namespace,
      String filterName,
      Duration minAge,
      Clock clock) {
    this.s3 = s3;
    this.storeName = storeName;
    this.bucket = bucket;
    this.directory = StoreObjectKeys.filterDirectory(storePrefix, namespace, filterName);
    this.filterName = filterName;
    this.minAge = minAge;
    this.clock = clock;
  }

  /** The filter's directory, ending in '/'. */
  public String directory() {
    return directory;
  }

  /** The store's name, as the manifest records it. */
  public String storeName() {
    return storeName;
  }

  @Override
  public String name(Part part, int index) {
    return part.role() == Role.BASE
        ? SnapshotNames.chunkName(filterName, part.version(), index)
        : SnapshotNames.deltaChunkName(filterName, part.version(), index);
  }

  @Override
  public byte[] load(int index, Manifest.ChunkRef ref) throws IOException {
    String key = StoreObjectKeys.key(directory, ref.name(), ref.sha256());
    try (ResponseInputStream<GetObjectResponse> in = s3.getObject(b -> b.bucket(bucket).key(key))) {
      Long length = in.response().contentLength();
      if (length == null || length != ref.bytes()) {
        // Before any byte is buffered: the manifest's size is the bound.
        throw new IOException(
            "chunk "
                + ref.name()
                + " holds "
                + length
                + " bytes, the manifest says "
                + ref.bytes());
      }
      byte[] data = readExactly(in, (int) ref.bytes());
      if (in.read() != -1) {
        throw new IOException("chunk " + ref.name() + " is longer than the manifest says");
      }
      return data;
    } catch (NoSuchKeyException e) {
      return null;
    } catch (SdkException e) {
      throw unavailable("load", e);
    }
  }

  @Override
  public Stored create(Part part, int index, byte[] data, int length, String sha256)
      throws IOException {
    String name = name(part, index);
    String key = StoreObjectKeys.key(directory, name, sha256);
    try {
      var response =
          s3.putObject(
              b -> b.bucket(bucket).key(key).ifNoneMatch("*").contentLength((long) length),
              RequestBody.fromBytes(length == data.length ? data : copy(data, length)));
      return new Stored(key, part, response.eTag());
    } catch (S3Exception e) {
      if (e.statusCode() == 412) {
        // The key holds its digest: the object there has exactly these bytes. It was not created
        // by this call, so a roll-back must not delete it (revision null).
        return new Stored(key, part, null);
      }
      throw unavailable("create", e);
    } catch (SdkException e) {
      throw unavailable("create", e);
    }
  }

  @Override
  public List<Stored> list() throws IOException {
    List<Stored> chunks = new ArrayList<>();
    forEachObject(
        o -> {
          Optional<Part> part = partOf(o.key());
          part.ifPresent(p -> chunks.add(new Stored(o.key(), p, o.eTag())));
        });
    return chunks;
  }

  /**
   * Deletes {@code chunk} if this store created it (a revision: the PUT that made it succeeded); a
   * chunk that was there already, or whose create failed, is left for the janitor, which removes it
   * by age once no manifest names it.
   */
  @Override
  public boolean delete(Stored chunk) {
    if (chunk.revision() == null || !chunk.name().startsWith(directory)) {
      return false;
    }
    try {
      s3.deleteObject(b -> b.bucket(bucket).key(chunk.name()));
      return true;
    } catch (SdkException e) {
      LOG.debug("object store {}: delete failed: {}", storeName, e.toString());
      return false;
    }
  }

  @Override
  public void deleteExcept(Set<Part> keep) throws IOException {
    deleteExcept(keep, null);
  }

  @Override
  public void deleteExcept(Set<Part> keep, Manifest published) throws IOException {
    Set<Part> exact = published == null ? Set.of() : Part.of(published);
    Set<String> named = new HashSet<>();
    if (published != null) {
      published
          .chunks()
          .forEach(c -> named.add(StoreObjectKeys.key(directory, c.name(), c.sha256())));
      published
          .deltas()
          .forEach(
              d ->
                  d.chunks()
                      .forEach(
                          c -> named.add(StoreObjectKeys.key(directory, c.name(), c.sha256()))));
    }
    Instant before = clock.instant().minus(minAge);
    List<String> doomed = new ArrayList<>();
    forEachObject(
        o -> {
          Optional<Part> part = partOf(o.key());
          // Chunks of the filter nothing needs: of no kept part (leftovers of a failed or crashed
          // publish, versions past their grace period), or of a published part under a digest the
          // manifest does not name (that version's publish was killed, then built again).
          boolean needed =
              part.isPresent()
                  && keep.contains(part.get())
                  && (!exact.contains(part.get()) || named.contains(o.key()));
          if (part.isPresent()
              && !needed
              && o.lastModified() != null
              && o.lastModified().isBefore(before)) {
            doomed.add(o.key());
          }
        });
    deleteKeys(doomed);
  }

  /**
   * Deletes every chunk of the filter in its directory, whatever its age: the filter is gone.
   *
   * @return how many objects were deleted
   */
  public int deleteAll() throws IOException {
    List<String> all = new ArrayList<>();
    forEachObject(
        o -> {
          if (partOf(o.key()).isPresent()) {
            all.add(o.key());
          }
        });
    deleteKeys(all);
    return all.size();
  }

  /** Bytes the filter's directory holds. */
  public long storedBytes() throws IOException {
    long[] total = {0};
    forEachObject(o -> total[0] += o.size() == null ? 0 : o.size());
    return total[0];
  }

  private void deleteKeys(List<String> keys) throws IOException {
    // One by one rather than DeleteObjects: the batch call needs a Content-MD5 or checksum header
    // that several S3-compatible stores handle differently; clean-ups are rare and small.
    for (String key : keys) {
      try {
        s3.deleteObject(b -> b.bucket(bucket).key(key));
      } catch (SdkException e) {
        throw unavailable("delete", e);
      }
    }
  }

  /** Each object of the filter's directory, a page of {@link #PAGE_SIZE} at a time. */
  private void forEachObject(Consumer<S3Object> each) throws IOException {
    try {
      forEachUnder(s3, bucket, directory, each);
    } catch (SdkException e) {
      throw unavailable("list", e);
    }
  }

  /**
   * Bytes the objects under {@code prefix} (a namespace's directory, ending in '/') hold: what a
   * namespace's budget counts, listed from the store so that a crash leaves nothing uncounted.
   */
  static long bytesUnder(S3Client s3, String storeName, String bucket, String prefix)
      throws IOException {
    long[] total = {0};
    try {
      forEachUnder(s3, bucket, prefix, o -> total[0] += o.size() == null ? 0 : o.size());
    } catch (SdkException e) {
      LOG.warn("object store {}: list of {} failed: {}", storeName, prefix, e.toString());
      throw new StoreUnavailableException(storeName, StoreFailures.why(e).orElse(null), e);
    }
    return total[0];
  }

  private static void forEachUnder(
      S3Client s3, String bucket, String prefix, Consumer<S3Object> each) {
    String token = null;
    do {
      String continuation = token;
      ListObjectsV2Response page =
          s3.listObjectsV2(
              b ->
                  b.bucket(bucket)
                      .prefix(prefix)
                      .maxKeys(PAGE_SIZE)
                      .continuationToken(continuation));
      page.contents().stream().filter(o -> o.key().startsWith(prefix)).forEach(each);
      token = Boolean.TRUE.equals(page.isTruncated()) ? page.nextContinuationToken() : null;
    } while (token != null);
  }

  /**
   * The part a key of this directory holds a chunk of; empty for anything else. A chunk name is
   * recognised only as {@link SnapshotNames.ChunkName} writes it for this filter (a version in the
   * one range), so every object the operator writes is one its clean-ups recognise.
   */
  Optional<Part> partOf(String key) {
    return StoreObjectKeys.parse(directory, key)
        .flatMap(chunk -> SnapshotNames.ChunkName.parse(filterName, chunk.chunkName()))
        .map(chunk -> chunk.delta() ? Part.delta(chunk.version()) : Part.base(chunk.version()));
  }

  private StoreUnavailableException unavailable(String what, SdkException e) {
    // The SDK's text may name the endpoint and bucket: the log only, never the status.
    LOG.warn("object store {}: {} in {} failed: {}", storeName, what, directory, e.toString());
    return new StoreUnavailableException(storeName, StoreFailures.why(e).orElse(null), e);
  }

  private static byte[] copy(byte[] data, int length) {
    byte[] exact = new byte[length];
    System.arraycopy(data, 0, exact, 0, length);
    return exact;
  }

  private static byte[] readExactly(InputStream in, int length) throws IOException {
    byte[] data = in.readNBytes(length);
    if (data.length != length) {
      throw new IOException("chunk ended after " + data.length + " of " + length + " bytes");
    }
    return data;
  }
}
