package io.bloomoperator.publish;

import io.bloomoperator.snapshot.ChunkStore;
import io.bloomoperator.snapshot.ChunkStore.Part;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The operator's chunk writers: a small pool shared by every publish, so a publish creates several
 * chunks at once instead of waiting for one API round trip (or object-store PUT) after the other.
 * Each round trip is latency-bound, not CPU-bound, so a few writers multiply publish throughput.
 *
 * <p>Fairness: one namespace has at most {@code max(1, writers - 1)} chunk writes submitted and not
 * finished at once (the same share as {@link io.bloomoperator.settings.BuildLimits build slots}),
 * so with two writers or more a big publish of one namespace always leaves a writer to the others;
 * a publish over its namespace's share waits on its own thread, which holds its build slot anyway.
 *
 * <p>Memory: each submitted chunk is a copy of at most one chunk (the encoder reuses its buffer),
 * so a namespace holds at most its share of chunk copies.
 */
public final class ChunkWriters implements AutoCloseable {

  /** Writes each chunk on the publishing thread: the order and behaviour before writers existed. */
  private static final ChunkWriters SEQUENTIAL = new ChunkWriters(null, 1);

  /** Null: write inline. */
  private final ExecutorService pool;

  private final int perNamespace;

  /** Chunk writes submitted and not finished, by namespace (only namespaces with one). */
  private final Map<String, Integer> inFlight = new HashMap<>();

  private ChunkWriters(ExecutorService pool, int perNamespace) {
    this.pool = pool;
    this.perNamespace = perNamespace;
  }

  /** One writer: every chunk on the publishing thread, one after the other. */
  public static ChunkWriters sequential() {
    return SEQUENTIAL;
  }

  /**
   * {@code writers} threads shared by all publishes ({@code BLOOM_PUBLISH_WRITERS}); 1 is {@link
   * #sequential()}.
   */
  public static ChunkWriters of(int writers) {
    if (writers < 1) {
      throw new IllegalArgumentException("chunk writers must be positive");
    }
    if (writers == 1) {
      return SEQUENTIAL;
    }
    AtomicInteger number = new AtomicInteger();
    ExecutorService pool =
        Executors.newFixedThreadPool(
            writers,
            r -> {
              Thread t = new Thread(r, "bloom-chunk-writer-" + number.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    return new ChunkWriters(pool, Math.max(1, writers - 1));
  }

  /** Chunk writes one namespace may have under way at once. */
  public int perNamespace() {
    return perNamespace;
  }

  /** Starts the chunk writes of one publish of {@code namespace} into {@code store}. */
  Batch batch(String namespace, ChunkStore store) {
    return new Batch(namespace, store);
  }

  @Override
  public void close() {
    if (pool != null) {
      pool.shutdownNow();
    }
  }

  private synchronized void enter(String namespace) throws InterruptedIOException {
    try {
      while (inFlight.getOrDefault(namespace, 0) >= perNamespace) {
        wait();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while waiting for a chunk writer");
    }
    inFlight.merge(namespace, 1, Integer::sum);
  }

  private synchronized void leave(String namespace) {
    inFlight.merge(namespace, -1, (a, b) -> a + b == 0 ? null : a + b);
    notifyAll();
  }

  /**
   * The chunk writes of one publish. {@link #create} returns once the write is submitted; {@link
   * #finish} waits for all of them and reports the first failure; {@link #created} lists what may
   * exist for a roll-back, after every write has ended.
   */
  final class Batch {
    private final String namespace;
    private final ChunkStore store;

    /** Guarded by this batch: chunks that exist or may exist, and writes not yet ended. */
    private final List<ChunkStore.Stored> created = new ArrayList<>();

    private int pending;

    /** The first failure, as the store threw it (its type decides the condition reason). */
    private Exception failure;

    private Batch(String namespace, ChunkStore store) {
      this.namespace = namespace;
      this.store = store;
    }

    /**
     * Creates chunk {@code index} of {@code part} from {@code data[0, length)}, on a writer when
     * there is a pool ({@code data} is copied: the encoder reuses it).
     *
     * @throws IOException the first failure of this batch's earlier writes (nothing more is
     *     submitted after one), or this write's own when written inline
     */
    void create(Part part, int index, byte[] data, int length, String sha256) throws IOException {
      throwIfFailed();
      if (pool == null) {
        write(part, index, data, length, sha256);
        throwIfFailed();
        return;
      }
      byte[] copy = Arrays.copyOf(data, length);
      enter(namespace);
      synchronized (this) {
        pending++;
      }
      try {
        pool.execute(
            () -> {
              try {
                write(part, index, copy, length, sha256);
              } finally {
                leave(namespace);
                synchronized (this) {
                  pending--;
                  notifyAll();
                }
              }
            });
      } catch (RuntimeException e) {
        leave(namespace);
        synchronized (this) {
          pending--;
        }
        throw new IOException("chunk writers are shut down", e);
      }
    }

    /** Waits for every submitted write; throws the first failure. */
    void finish() throws IOException {
      awaitAll();
      throwIfFailed();
    }

    /**
     * What this batch created or may have created (a failed create may have been applied), once
     * every write has ended: what a roll-back deletes.
     */
    List<ChunkStore.Stored> created() {
      boolean interrupted = false;
      synchronized (this) {
        while (pending > 0) {
          try {
            wait();
          } catch (InterruptedException e) {
            // The roll-back needs the complete list; the interrupt is restored afterwards.
            interrupted = true;
          }
        }
        List<ChunkStore.Stored> all = List.copyOf(created);
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
        return all;
      }
    }

    private void awaitAll() throws InterruptedIOException {
      synchronized (this) {
        try {
          while (pending > 0) {
            wait();
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new InterruptedIOException("interrupted while waiting for chunk writes");
        }
      }
    }

    private synchronized void throwIfFailed() throws IOException {
      if (failure instanceof IOException io) {
        throw io;
      }
      if (failure instanceof RuntimeException unchecked) {
        throw unchecked;
      }
    }

    private void write(Part part, int index, byte[] data, int length, String sha256) {
      try {
        ChunkStore.Stored stored = store.create(part, index, data, length, sha256);
        synchronized (this) {
          created.add(stored);
        }
      } catch (ChunkStore.NameTakenException e) {
        failed(e); // nothing was created
      } catch (IOException | RuntimeException e) {
        // etcd applies the write that takes it over its quota and only then answers NOSPACE, and
        // a timed-out create may have been applied too: the chunk may exist, so it is removed
        // with the others (after an ownership check).
        synchronized (this) {
          created.add(new ChunkStore.Stored(store.name(part, index), part, null));
        }
        failed(e);
      }
    }

    private synchronized void failed(Exception e) {
      if (failure == null) {
        failure = e;
      }
    }
  }
}
