package io.bloomoperator.snapshot.bench;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.SequenceInputStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Decoding the 12 MB snapshot of a 10M-key, 1% filter (13 chunks of 1,000,000 bytes).
 *
 * <ul>
 *   <li>{@code guavaReadFrom}: Guava {@code readFrom} on the whole payload in one array (its best
 *       case)
 *   <li>{@code guavaReadFromChunks}: Guava {@code readFrom} over the chunks, what a Guava reader
 *       would do
 *   <li>{@code oursDecodePayload}: our parse of the whole payload, no verification (like for like)
 *   <li>{@code oursDecodeVerified}: the real reader path: per-chunk size + SHA-256, header vs
 *       manifest, total SHA-256
 * </ul>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@State(Scope.Benchmark)
public class DecodeBenchmark {

  byte[] payload;
  List<byte[]> chunks;
  Manifest manifest;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    int keys = 10_000_000;
    BloomFilterBits.Builder builder =
        BloomFilterBits.builder(KeyType.LONG, BloomFilterSizing.forKeys(keys, 0.01));
    for (int i = 0; i < keys; i++) {
      builder.putLong(Keys.presentLong(i));
    }
    BloomFilterBits bits = builder.build();
    chunks = new ArrayList<>();
    ByteArrayOutputStream whole = new ByteArrayOutputStream();
    SnapshotEncoder.Result result =
        SnapshotEncoder.encode(
            bits,
            1_000_000,
            (index, data, length, sha) -> {
              chunks.add(Arrays.copyOf(data, length));
              whole.write(data, 0, length);
            });
    payload = whole.toByteArray();
    manifest = Manifest.of("bench", 1, bits, keys, result, Instant.now());
    if (!SnapshotNames.chunkName("bench", 1, 0).equals(manifest.chunks().get(0).name())) {
      throw new IllegalStateException("unexpected chunk naming");
    }
  }

  @Benchmark
  public BloomFilter<Long> guavaReadFrom() throws IOException {
    return BloomFilter.readFrom(new ByteArrayInputStream(payload), Funnels.longFunnel());
  }

  @Benchmark
  public BloomFilter<Long> guavaReadFromChunks() throws IOException {
    List<ByteArrayInputStream> streams = new ArrayList<>(chunks.size());
    for (byte[] chunk : chunks) {
      streams.add(new ByteArrayInputStream(chunk));
    }
    return BloomFilter.readFrom(
        new SequenceInputStream(Collections.enumeration(streams)), Funnels.longFunnel());
  }

  @Benchmark
  public BloomFilterBits oursDecodePayload() throws SnapshotVerificationException {
    return SnapshotDecoder.decodePayload(payload, KeyType.LONG);
  }

  @Benchmark
  public BloomFilterBits oursDecodeVerified() throws SnapshotVerificationException {
    return SnapshotDecoder.decode(manifest, chunks.iterator());
  }
}
