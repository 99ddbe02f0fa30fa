package io.bloomoperator.assemble;

import io.bloomoperator.source.LineBlock;
import java.util.ArrayList;
import java.util.List;

/**
 * Blocks gathered in source order for one hand-over to a helper, and the bytes they keep alive. A
 * batch is worth handing over at {@link #LINES} lines (fewer cost more to hand over than to parse)
 * or at {@link #BYTES} bytes, whichever comes first: a batch of long lines goes after a few of
 * them, so what a build holds is bounded in bytes, not in lines whatever their length.
 *
 * <p>A block's bytes are its offsets plus its array, counted once for consecutive blocks over the
 * same array (a source whose reads are small hands over several blocks of one array).
 */
final class BlockBatch {

  /** Lines worth a hand-over to a helper. */
  static final int LINES = 2048;

  /**
   * Bytes after which a batch is handed over whatever its lines: parsing 1 MiB costs far more than
   * handing it over, and a build holds at most a few such batches (see {@link ParallelFill}).
   */
  static final long BYTES = 1L << 20;

  private final List<LineBlock> blocks = new ArrayList<>();
  private int lines;
  private long bytes;
  private byte[] lastArray;

  /**
   * Adds the next block of the source.
   *
   * @return the bytes this block adds to what the batch keeps alive
   */
  long add(LineBlock block) {
    long added = block.offsetBytes();
    if (block.bytes() != lastArray) {
      added += block.bytes().length;
      lastArray = block.bytes();
    }
    blocks.add(block);
    lines += block.count();
    bytes += added;
    return added;
  }

  /** Whether the batch is worth a hand-over. */
  boolean full() {
    return lines >= LINES || bytes >= BYTES;
  }

  boolean isEmpty() {
    return blocks.isEmpty();
  }

  /** The blocks, in source order. */
  List<LineBlock> blocks() {
    return blocks;
  }

  /** What the blocks keep alive: their arrays (each once) and offsets. */
  long bytes() {
    return bytes;
  }
}
