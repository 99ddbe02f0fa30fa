package io.bloomoperator.source;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A response body as a blocking {@link InputStream} that gives up when the server stops sending:
 * a read that waits longer than the stall timeout for the next bytes cancels the exchange (which
 * closes the connection) and throws {@link Stalled}.
 *
 * <p>Like {@code BodyHandlers.ofInputStream()} it requests one list of buffers at a time, so at
 * most two lists (the one being read and the next) are held, whatever the size of the body. It is
 * used instead of {@code ofInputStream()} because the JDK stream has no read timeout and a stream
 * closed from another thread reads as a normal end of body, which would silently truncate a key
 * export. Here the timeout is the reading thread's own wait, so no watchdog thread is needed.
 */
final class HttpBodyStream extends InputStream
    implements HttpResponse.BodySubscriber<HttpBodyStream> {

  /** No bytes arrived for the stall timeout. */
  static final class Stalled extends InterruptedIOException {
    Stalled(String message) {
      super(message);
    }
  }

  private static final Object END = new Object();

  private final Duration stallTimeout;
  /** Lists of buffers, then {@link #END} or the Throwable that ended the body. */
  private final BlockingQueue<Object> queue = new LinkedBlockingQueue<>();
  private Flow.Subscription subscription;
  private boolean cancelled;
  private Iterator<ByteBuffer> buffers = List.<ByteBuffer>of().iterator();
  private ByteBuffer current;
  private boolean ended;
  private boolean closed;

  HttpBodyStream(Duration stallTimeout) {
    this.stallTimeout = stallTimeout;
  }

  /** A handler that delivers the body as a new stream with the given stall timeout. */
  static HttpResponse.BodyHandler<HttpBodyStream> handler(Duration stallTimeout) {
    return info -> new HttpBodyStream(stallTimeout);
  }

  // Subscriber side (HttpClient threads).

  @Override
  public CompletionStage<HttpBodyStream> getBody() {
    return CompletableFuture.completedFuture(this);
  }

  @Override
  public void onSubscribe(Flow.Subscription s) {
    synchronized (this) {
      subscription = s;
      if (!cancelled) {
        s.request(1);
        return;
      }
    }
    s.cancel();
  }

  @Override
  public void onNext(List<ByteBuffer> item) {
    queue.add(item);
  }

  @Override
  public void onError(Throwable throwable) {
    queue.add(throwable);
  }

  @Override
  public void onComplete() {
    queue.add(END);
  }

  // Reader side (the reconciler's thread).

  @Override
  public int read() throws IOException {
    byte[] one = new byte[1];
    int n = read(one, 0, 1);
    return n < 0 ? -1 : one[0] & 0xff;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    java.util.Objects.checkFromIndexSize(off, len, b.length);
    if (len == 0) {
      return 0;
    }
    if (!nextBytes()) {
      return -1;
    }
    int n = Math.min(len, current.remaining());
    current.get(b, off, n);
    return n;
  }

  @Override
  public int available() {
    return current == null ? 0 : current.remaining();
  }

  /** Makes {@link #current} hold unread bytes, waiting for them; false at the end of the body. */
  @SuppressWarnings("unchecked")
  private boolean nextBytes() throws IOException {
    if (closed) {
      throw new IOException("body stream closed");
    }
    while (current == null || !current.hasRemaining()) {
      if (buffers.hasNext()) {
        current = buffers.next();
        continue;
      }
      if (ended) {
        return false;
      }
      Object item;
      try {
        item = queue.poll(stallTimeout.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        cancel();
        throw new InterruptedIOException("interrupted while waiting for the response body");
      }
      if (item == null) {
        cancel();
        throw new Stalled("no data received for " + stallTimeout.toMillis() + " ms");
      }
      if (item == END) {
        ended = true;
        return false;
      }
      if (item instanceof Throwable t) {
        ended = true;
        throw t instanceof IOException io ? io : new IOException(t.getMessage(), t);
      }
      buffers = ((List<ByteBuffer>) item).iterator();
      // Ask for the next list while this one is read: one list in flight, one in hand.
      request();
    }
    return true;
  }

  /** Stops the download; a body not read to its end closes the connection. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (!ended) {
      cancel();
    }
    queue.clear();
    buffers = List.<ByteBuffer>of().iterator();
    current = null;
  }

  private synchronized void request() {
    if (!cancelled) {
      subscription.request(1);
    }
  }

  private void cancel() {
    ended = true;
    Flow.Subscription s;
    synchronized (this) {
      cancelled = true;
      s = subscription;
    }
    if (s != null) {
      s.cancel();
    }
  }
}
