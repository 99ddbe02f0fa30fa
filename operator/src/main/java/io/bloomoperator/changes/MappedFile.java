package io.bloomoperator.changes;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A zeroed, sparse, memory-mapped file of a counting shadow (its counters or its key fingerprints),
 * read and updated as aligned ints and longs with compare-and-set, so a full build's threads may
 * update it at once. Off the Java heap: its pages are taken only as they are written.
 */
final class MappedFile implements AutoCloseable {

  /** Each mapping covers this many bytes (a {@link MappedByteBuffer} is int-indexed). */
  private static final int REGION_BYTES = 1 << 30;

  private static final VarHandle INTS =
      MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

  private static final VarHandle LONGS =
      MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  private final Path file;
  private final FileChannel channel;
  private final MappedByteBuffer[] regions;
  private final long bytes;

  /**
   * {@code bytes} zero bytes in {@code file} (created, or truncated). The caller has checked the
   * size against its bounds: this only allocates.
   */
  static MappedFile create(Path file, long bytes) throws IOException {
    FileChannel channel =
        FileChannel.open(
            file,
            StandardOpenOption.CREATE,
            StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.READ,
            StandardOpenOption.WRITE);
    try {
      channel.truncate(0);
      int count = (int) ((bytes + REGION_BYTES - 1) / REGION_BYTES);
      MappedByteBuffer[] regions = new MappedByteBuffer[count];
      for (int i = 0; i < count; i++) {
        long from = (long) i * REGION_BYTES;
        regions[i] =
            channel.map(FileChannel.MapMode.READ_WRITE, from, Math.min(REGION_BYTES, bytes - from));
      }
      return new MappedFile(file, channel, regions, bytes);
    } catch (IOException | RuntimeException e) {
      channel.close();
      Files.deleteIfExists(file);
      throw e;
    }
  }

  private MappedFile(Path file, FileChannel channel, MappedByteBuffer[] regions, long bytes) {
    this.file = file;
    this.channel = channel;
    this.regions = regions;
    this.bytes = bytes;
  }

  /** The file's size. */
  long bytes() {
    return bytes;
  }

  /** The int at byte {@code at} (a multiple of 4). */
  int getInt(long at) {
    return (int) INTS.getVolatile(regions[(int) (at / REGION_BYTES)], (int) (at % REGION_BYTES));
  }

  /** Sets the int at {@code at} from {@code expected} to {@code value}; whether it was expected. */
  boolean casInt(long at, int expected, int value) {
    return INTS.compareAndSet(
        regions[(int) (at / REGION_BYTES)], (int) (at % REGION_BYTES), expected, value);
  }

  /** The long at byte {@code at} (a multiple of 8). */
  long getLong(long at) {
    return (long) LONGS.getVolatile(regions[(int) (at / REGION_BYTES)], (int) (at % REGION_BYTES));
  }

  /**
   * Sets the long at {@code at} from {@code expected} to {@code value}; whether it was expected.
   */
  boolean casLong(long at, long expected, long value) {
    return LONGS.compareAndSet(
        regions[(int) (at / REGION_BYTES)], (int) (at % REGION_BYTES), expected, value);
  }

  /** Unmaps nothing explicitly (the JVM does, once unreachable) but closes and deletes the file. */
  @Override
  public void close() {
    try {
      channel.close();
      Files.deleteIfExists(file);
    } catch (IOException e) {
      // The directory is emptied at the next start anyway.
    }
  }
}
