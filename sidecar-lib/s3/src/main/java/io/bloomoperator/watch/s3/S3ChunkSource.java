package io.bloomoperator.watch.s3;

import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.ObjectStoreException;
import io.bloomoperator.snapshot.SnapshotLimits;
import io.bloomoperator.watch.ObjectStore;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * The chunks of one load from an {@link S3ObjectStore}, fetched ahead of the decoder, at most the
 * store's parallelism at a time, in the order the reader will ask for them (the base's, then each
 * delta's). A chunk the decoder skips (the base, when only deltas are applied to the served filter)
 * is never fetched: fetching starts at the first chunk asked for.
 *
 * <p>Each chunk is read with ranged GETs into an array of exactly the size the manifest announces
 * (bounded by the reader's limits before the load starts): a response that breaks off is resumed
 * with a GET of the remaining range, an object of another size is a failed load, and nothing beyond
 * the announced size is ever read. Not thread-safe: one watcher thread runs one load.
 */
public final class S3ChunkSource implements ObjectStore.Download {

  private static final Logger LOG = LoggerFactory.getLogger(S3ChunkSource.class);

  /** What an S3 error code looks like; anything else a store sends is not repeated. */
  private static final java.util.regex.Pattern ERROR_CODE =
      java.util.regex.Pattern.compile("[A-Za-z0-9.]{1,64}");

  /** A failed attempt's pause before the next, times the attempt's number. */
  private static final long RETRY_PAUSE_MILLIS = 200;

  private final S3ObjectStore store;
  private final List<ObjectStore.Chunk> chunks;
  private final Map<Integer, Future<byte[]>> inFlight = new HashMap<>();
  private int next; // the first position not submitted yet

  S3ChunkSource(S3ObjectStore store, List<ObjectStore.Chunk> chunks) {
    this.store = store;
    this.chunks = List.copyOf(chunks);
  }

  @Override
  public byte[] load(int position) throws IOException {
    if (position < 0 || position >= chunks.size()) {
      throw new IOException("no chunk " + position + " in this download");
    }
    // Chunks before this one are not wanted any more (the decoder never goes back).
    inFlight.keySet().removeIf(p -> p < position && cancel(inFlight.get(p)));
    if (next < position) {
      next = position;
    }
    while (next < chunks.size() && next < position + store.parallelism()) {
      int p = next++;
      try {
        inFlight.put(p, store.fetchers().submit(() -> fetch(p)));
      } catch (RejectedExecutionException e) {
        throw new ObjectStoreException(
            LoadFailureReason.STORE_UNAVAILABLE, "object store client is closed", e);
      }
    }
    Future<byte[]> chunk = inFlight.remove(position);
    if (chunk == null) {
      return fetch(position); // asked for a second time
    }
    try {
      return chunk.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while fetching chunk " + position);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof IOException io) {
        throw io;
      }
      throw new IOException("fetching chunk " + position + " failed", e.getCause());
    } catch (CancellationException e) {
      throw new IOException("fetching chunk " + position + " was cancelled", e);
    }
  }

  private static boolean cancel(Future<byte[]> future) {
    future.cancel(true);
    return true;
  }

  /**
   * Chunk {@code position}, read with ranged GETs of what is still missing until it is complete.
   * Returns null when the object does not exist (the decoder reports the chunk as missing).
   */
  private byte[] fetch(int position) throws IOException {
    ObjectStore.Chunk chunk = chunks.get(position);
    String key = chunk.key();
    if (chunk.bytes() > SnapshotLimits.MAX_CHUNK_BYTES) {
      // The reader's limits refuse such manifests first; never allocate what a chunk cannot hold.
      throw new IOException(
          "chunk "
              + position
              + " announces more than "
              + SnapshotLimits.MAX_CHUNK_BYTES
              + " bytes");
    }
    byte[] data = new byte[chunk.bytes()];
    int filled = 0;
    int failed = 0;
    int requests = 0;
    // Attempts count only requests that brought nothing; a store that sends a little and breaks
    // off each time would otherwise be asked up to the chunk's size times. Every request must bring
    // 64 KiB on average, beyond the attempts.
    int maxRequests = store.attempts() + data.length / (64 << 10) + 1;
    while (true) {
      int before = filled;
      requests++;
      try {
        read(key, data, filled);
        return data;
      } catch (NoSuchObject e) {
        return null;
      } catch (IOException | SdkClientException e) {
        if (e instanceof ObjectStoreException denied
            && denied.reason() == LoadFailureReason.STORE_DENIED) {
          throw denied;
        }
        if (e instanceof SizeMismatch size) {
          throw size;
        }
        if (Thread.currentThread().isInterrupted()) {
          throw new InterruptedIOException("fetch of " + key + " cancelled");
        }
        if (e instanceof PartialRead partial) {
          filled = partial.filled;
        }
        // The SDK's messages may carry what the store sent (an error message, a request id):
        // only the exception's kind goes into messages and logs.
        String why =
            e instanceof SdkClientException ? e.getClass().getSimpleName() : e.getMessage();
        if (requests >= maxRequests) {
          throw new ObjectStoreException(
              LoadFailureReason.STORE_UNAVAILABLE,
              "object "
                  + key
                  + " of "
                  + this.store.description()
                  + ": "
                  + requests
                  + " requests did not complete it: "
                  + why,
              null);
        }
        if (filled == before && ++failed >= store.attempts()) {
          throw e instanceof ObjectStoreException failure
              ? failure
              : new ObjectStoreException(
                  LoadFailureReason.STORE_UNAVAILABLE,
                  "object "
                      + key
                      + " of "
                      + this.store.description()
                      + ": "
                      + failed
                      + " attempts failed: "
                      + why,
                  null);
        }
        LOG.debug(
            "fetch of {} broke after {} of {} bytes, resuming: {}", key, filled, data.length, why);
        pause(failed);
      }
    }
  }

  /**
   * One ranged GET of {@code key} from byte {@code from} to the announced end, into {@code data}.
   *
   * @return {@code data.length}: the chunk is complete
   * @throws PartialRead if the response broke off or ended early (the bytes that arrived are kept)
   */
  private int read(String key, byte[] data, int from) throws IOException {
    if (data.length == 0) {
      return 0;
    }
    GetObjectRequest request =
        GetObjectRequest.builder()
            .bucket(store.bucket())
            .key(key)
            .range("bytes=" + from + "-" + (data.length - 1))
            .build();
    int filled = from;
    try (ResponseInputStream<GetObjectResponse> in = store.client().getObject(request)) {
      checkObjectSize(key, in.response(), data.length);
      try {
        int n;
        while (filled < data.length && (n = in.read(data, filled, data.length - filled)) > 0) {
          filled += n;
        }
      } catch (IOException | SdkClientException e) {
        throw new PartialRead(filled, e);
      }
      if (filled < data.length) {
        // A response that ends before its announced length (a connection closed early).
        throw new PartialRead(filled, new java.io.EOFException("response ended early"));
      }
      // What the store sends beyond the announced range is not read: abort, do not drain it.
      in.abort();
      return filled;
    } catch (S3Exception e) {
      throw translate(key, e);
    }
  }

  /** The object's total size, from the ranged response, must be the announced one. */
  private void checkObjectSize(String key, GetObjectResponse response, int announced)
      throws SizeMismatch {
    String range = response.contentRange();
    long total = -1;
    if (range != null && range.lastIndexOf('/') > 0) {
      try {
        total = Long.parseLong(range.substring(range.lastIndexOf('/') + 1).strip());
      } catch (NumberFormatException e) {
        total = -1; // "*": unknown, the decoder's size and digest checks still apply
      }
    }
    if (total >= 0 && total != announced) {
      throw new SizeMismatch(
          "object " + key + " is " + total + " bytes, the manifest announces " + announced);
    }
  }

  private IOException translate(String key, S3Exception e) {
    int status = e.statusCode();
    String code = e.awsErrorDetails() == null ? null : e.awsErrorDetails().errorCode();
    if (code != null && !ERROR_CODE.matcher(code).matches()) {
      // The code is the store's text and goes into logs and reader reports: only a plain S3
      // error code (AccessDenied, SlowDown, ...) is kept, never whatever else a store may send.
      code = null;
    }
    String what =
        "object "
            + key
            + " of "
            + store.description()
            + ": HTTP "
            + status
            + (code == null ? "" : " " + code);
    if (status == 404) {
      return new NoSuchObject(what);
    }
    if (status == 416) {
      return new SizeMismatch(what + " (shorter than the manifest announces)");
    }
    // No cause: the S3Exception's message is the store's own text (its error message, request
    // ids), and a failure's cause chain reaches listeners and logs.
    if (status == 401 || status == 403) {
      return new ObjectStoreException(
          LoadFailureReason.STORE_DENIED,
          what + ": the reader's credentials may not read it",
          null);
    }
    return new ObjectStoreException(LoadFailureReason.STORE_UNAVAILABLE, what, null);
  }

  private static void pause(int attempt) throws InterruptedIOException {
    try {
      Thread.sleep(RETRY_PAUSE_MILLIS * Math.max(1, attempt));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted");
    }
  }

  /** Cancels what is still being fetched; the fetch threads drop what they hold. */
  @Override
  public void close() {
    inFlight.values().forEach(f -> f.cancel(true));
    inFlight.clear();
  }

  /** The object is not in the store: the decoder reports a missing chunk. */
  private static final class NoSuchObject extends IOException {
    private static final long serialVersionUID = 1L;

    NoSuchObject(String message) {
      super(message);
    }
  }

  /** The object is not the size the manifest announces: no retry can help. */
  private static final class SizeMismatch extends IOException {
    private static final long serialVersionUID = 1L;

    SizeMismatch(String message) {
      super(message);
    }
  }

  /** A response that broke off after {@link #filled} bytes of the chunk had arrived. */
  private static final class PartialRead extends IOException {
    private static final long serialVersionUID = 1L;
    private final transient int filled;

    PartialRead(int filled, Throwable cause) {
      super("response broke off at byte " + filled + ": " + cause, cause);
      this.filled = filled;
    }
  }
}
