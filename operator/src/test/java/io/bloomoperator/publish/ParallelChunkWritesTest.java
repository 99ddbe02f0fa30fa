package io.bloomoperator.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.ChunkStore;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotNames;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A publish creates its chunks several at once through the operator's {@link ChunkWriters}, within
 * its namespace's share, and keeps the crash-safety rules: every chunk exists before the manifest,
 * and a failed chunk write leaves none of this publish's chunks behind. The chunk store is an
 * in-memory one that takes 40 ms per create (the point is the overlap, which the API server's
 * latency hides in a real cluster); the manifest goes to the fabric8 mock server.
 */
@EnableKubernetesMockClient(crud = true)
class ParallelChunkWritesTest {

  private static final String NS = "shop";
  private static final String FILTER = "ids";

  static KubernetesClient client;

  private BloomFilter owner;
  private ChunkWriters writers;

  @BeforeEach
  void setUp() {
    owner = new BloomFilter();
    owner.getMetadata().setName(FILTER);
    owner.getMetadata().setNamespace(NS);
    owner.getMetadata().setUid("uid-1");
    writers = ChunkWriters.of(4);
  }

  @AfterEach
  void tearDown() {
    writers.close();
    client.configMaps().inNamespace(NS).delete();
  }

  @Test
  void chunksAreWrittenSeveralAtOnceWithinTheNamespaceShareAndAllBeforeTheManifest()
      throws Exception {
    SlowChunks chunks = new SlowChunks(-1);
    SnapshotStore store = store(chunks);

    PublishedSnapshot published =
        PublicationFixtures.publish(
            store, DeltaPolicy.WHOLE_SNAPSHOTS_ONLY, bigBits(), 100, null, 0, Instant.now());

    Manifest manifest = published.manifest();
    assertThat(chunks.stored.keySet())
        .containsExactlyInAnyOrderElementsOf(
            manifest.chunks().stream().map(Manifest.ChunkRef::name).toList());
    // Four writers, one namespace: three at once, never the fourth.
    assertThat(chunks.maxConcurrent.get()).isEqualTo(writers.perNamespace()).isEqualTo(3);
    assertThat(chunks.createdAfterManifest.get()).isZero();
  }

  @Test
  void aFailedChunkWriteRollsBackEveryChunkOfThePublishAndWritesNoManifest() {
    SlowChunks chunks = new SlowChunks(7);
    SnapshotStore store = store(chunks);

    assertThatThrownBy(
            () ->
                PublicationFixtures.publish(
                    store,
                    DeltaPolicy.WHOLE_SNAPSHOTS_ONLY,
                    bigBits(),
                    100,
                    null,
                    0,
                    Instant.now()))
        .isInstanceOf(PublishException.class);

    assertThat(chunks.stored).isEmpty();
    assertThat(chunks.creates.get()).isGreaterThan(7);
    assertThat(
            client.configMaps().inNamespace(NS).withName(SnapshotNames.manifestName(FILTER)).get())
        .isNull();
  }

  @Test
  void oneNamespaceNeverTakesEveryWriter() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger startedA = new AtomicInteger();
    AtomicInteger startedB = new AtomicInteger();
    ChunkWriters.Batch a = writers.batch("a", new BlockingChunks(startedA, release));
    ChunkWriters.Batch b = writers.batch("b", new BlockingChunks(startedB, release));
    byte[] data = new byte[8];
    for (int i = 0; i < 3; i++) {
      a.create(ChunkStore.Part.base(1), i, data, 8, "x");
    }
    Thread fourth =
        new Thread(
            () -> {
              try {
                a.create(ChunkStore.Part.base(1), 3, data, 8, "x");
              } catch (IOException e) {
                throw new IllegalStateException(e);
              }
            });
    fourth.start();
    b.create(ChunkStore.Part.base(1), 0, data, 8, "x");

    waitFor(() -> startedA.get() == 3 && startedB.get() == 1);
    Thread.sleep(200);
    assertThat(startedA.get()).isEqualTo(3);
    assertThat(fourth.isAlive()).isTrue();

    release.countDown();
    fourth.join(5_000);
    a.finish();
    b.finish();
    assertThat(a.created()).hasSize(4);
    assertThat(b.created()).hasSize(1);
  }

  private SnapshotStore store(ChunkStore chunks) {
    return new SnapshotStore(client, owner, null)
        .on(new ChunkStoreBackend(chunks, "memory"))
        .writingChunksWith(writers);
  }

  /** 32 KiB of bits: 33 chunks of 1 KiB. */
  private static BloomFilterBits bigBits() {
    BloomFilterBits.Builder builder = BloomFilterBits.builder(KeyType.STRING, 64 * 4096, 3);
    for (int i = 0; i < 2_000; i++) {
      builder.putString("k" + i);
    }
    return builder.build();
  }

  private static void waitFor(java.util.function.BooleanSupplier condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(condition.getAsBoolean()).isTrue();
  }

  /** Chunks in memory, 40 ms per create; chunk {@code failAt} of every part fails. */
  private final class SlowChunks implements ChunkStore {
    final Map<String, byte[]> stored = new ConcurrentHashMap<>();
    final AtomicInteger running = new AtomicInteger();
    final AtomicInteger maxConcurrent = new AtomicInteger();
    final AtomicInteger creates = new AtomicInteger();
    final AtomicInteger createdAfterManifest = new AtomicInteger();
    private final int failAt;

    SlowChunks(int failAt) {
      this.failAt = failAt;
    }

    @Override
    public String name(Part part, int index) {
      return part.role() == Role.BASE
          ? SnapshotNames.chunkName(FILTER, part.version(), index)
          : SnapshotNames.deltaChunkName(FILTER, part.version(), index);
    }

    @Override
    public Stored create(Part part, int index, byte[] data, int length, String sha256)
        throws IOException {
      creates.incrementAndGet();
      int now = running.incrementAndGet();
      maxConcurrent.accumulateAndGet(now, Math::max);
      try {
        Thread.sleep(40);
        if (client.configMaps().inNamespace(NS).withName(SnapshotNames.manifestName(FILTER)).get()
            != null) {
          createdAfterManifest.incrementAndGet();
        }
        if (index == failAt) {
          throw new IOException("injected chunk write failure");
        }
        stored.put(name(part, index), java.util.Arrays.copyOf(data, length));
        return new Stored(name(part, index), part, "1");
      } catch (InterruptedException e) {
        throw new java.io.InterruptedIOException();
      } finally {
        running.decrementAndGet();
      }
    }

    @Override
    public byte[] load(int index, Manifest.ChunkRef ref) {
      return stored.get(ref.name());
    }

    @Override
    public List<Stored> list() {
      return List.of();
    }

    @Override
    public boolean delete(Stored chunk) {
      stored.remove(chunk.name());
      return true;
    }

    @Override
    public void deleteExcept(Set<Part> keep) {}
  }

  /** Counts creates started and holds each until released. */
  private record BlockingChunks(AtomicInteger started, CountDownLatch release)
      implements ChunkStore {

    @Override
    public String name(Part part, int index) {
      return "c" + index;
    }

    @Override
    public Stored create(Part part, int index, byte[] data, int length, String sha256)
        throws IOException {
      started.incrementAndGet();
      try {
        release.await();
      } catch (InterruptedException e) {
        throw new java.io.InterruptedIOException();
      }
      return new Stored(name(part, index), part, "1");
    }

    @Override
    public byte[] load(int index, Manifest.ChunkRef ref) {
      return null;
    }

    @Override
    public List<Stored> list() {
      return List.of();
    }

    @Override
    public boolean delete(Stored chunk) {
      return true;
    }

    @Override
    public void deleteExcept(Set<Part> keep) {}
  }
}
