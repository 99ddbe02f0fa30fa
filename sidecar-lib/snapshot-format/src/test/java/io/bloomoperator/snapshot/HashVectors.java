package io.bloomoperator.snapshot;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * Per-key hash and probe positions for geometries over 2^32 bits (whose payloads are too large to
 * check in): where a reader's index arithmetic overflows 32 bits, these fail. Each entry's
 * positions are written from the layouts' rules and then confirmed by this library's own lookup on
 * an array of that size holding exactly those bits: the key answers present, and absent as soon as
 * any one of them is cleared.
 */
final class HashVectors {

  /** Guava layout: 2^26 + 1 words, 4,294,967,360 bits (over 2^32: 32-bit arithmetic fails). */
  static final int GUAVA_WORDS = (1 << 26) + 1;

  static final int GUAVA_K = 7;

  /** Split-block layout: 2^24 + 1 blocks, 4,294,967,552 bits. */
  static final int BLOCKS = (1 << 24) + 1;

  private HashVectors() {}

  static List<String> keys(KeyType type) {
    List<String> keys = new java.util.ArrayList<>();
    for (int i = 0; i < 24; i++) {
      keys.add(TestVectors.key(type, i * 3));
    }
    return keys;
  }

  static ObjectNode json(ObjectMapper mapper) {
    ObjectNode root = mapper.createObjectNode();
    ObjectNode guava = root.putObject("guava");
    guava.put("numBits", (long) GUAVA_WORDS * Long.SIZE);
    guava.put("numHashFunctions", GUAVA_K);
    ArrayNode guavaKeys = guava.putArray("keys");
    long[] words = new long[GUAVA_WORDS];
    for (KeyType type : KeyType.values()) {
      for (String key : keys(type)) {
        Murmur3x64.Hash128 h =
            type == KeyType.LONG
                ? Murmur3x64.hashLong(Long.parseLong(key))
                : Murmur3x64.hashString(key);
        long numBits = (long) GUAVA_WORDS * Long.SIZE;
        long[] indexes = new long[GUAVA_K];
        long combined = h.h1();
        for (int i = 0; i < GUAVA_K; i++) {
          indexes[i] = (combined & Long.MAX_VALUE) % numBits; // Guava's rule
          combined += h.h2();
        }
        BloomFilterBits bits = BloomFilterBits.wrap(type, FilterFormat.GUAVA, GUAVA_K, words);
        confirm(bits, type, key, words, indexes, index -> new long[] {index >>> 6, 1L << index});
        ObjectNode entry = guavaKeys.addObject();
        entry.put("keyType", type.crdName()).put("key", key);
        entry.put("murmur3H1", hex(h.h1())).put("murmur3H2", hex(h.h2()));
        ArrayNode out = entry.putArray("bitIndexes");
        for (long index : indexes) {
          out.add(index);
        }
      }
    }
    words = null; // the split-block array below needs the room
    ObjectNode split = root.putObject("splitBlock");
    split.put("numBlocks", BLOCKS);
    split.put("numBits", (long) BLOCKS * 256);
    ArrayNode splitKeys = split.putArray("keys");
    long[] blocks = new long[BLOCKS * 4];
    for (KeyType type : KeyType.values()) {
      for (String key : keys(type)) {
        long hash =
            type == KeyType.LONG ? Xxh64.hashLong(Long.parseLong(key)) : Xxh64.hashString(key);
        long block = SplitBlockBits.blockBase(hash, BLOCKS) >>> 2;
        long[] one = new long[4];
        SplitBlockBits.put(one, 1, hash);
        int[] bitInWord = new int[8];
        long[] positions = new long[8];
        for (int j = 0; j < 8; j++) {
          int word = (int) (one[j / 2] >>> (32 * (j % 2)));
          if (Integer.bitCount(word) != 1) {
            throw new IllegalStateException("a split-block key sets one bit per 32-bit word");
          }
          bitInWord[j] = Integer.numberOfTrailingZeros(word);
          positions[j] = block * 256 + j * 32L + bitInWord[j];
        }
        BloomFilterBits bits = BloomFilterBits.wrap(type, FilterFormat.SPLIT_BLOCK, 8, blocks);
        confirm(bits, type, key, blocks, positions, p -> new long[] {p >>> 6, 1L << p});
        ObjectNode entry = splitKeys.addObject();
        entry.put("keyType", type.crdName()).put("key", key);
        entry.put("xxh64", hex(hash)).put("block", block);
        ArrayNode out = entry.putArray("bitInWord");
        for (int bit : bitInWord) {
          out.add(bit);
        }
      }
    }
    return root;
  }

  /**
   * Sets exactly {@code positions} in the zeroed {@code words}, requires the lookup to answer
   * present, and absent with any one of them cleared; leaves {@code words} zeroed.
   */
  private static void confirm(
      BloomFilterBits bits,
      KeyType type,
      String key,
      long[] words,
      long[] positions,
      java.util.function.LongFunction<long[]> wordAndMask) {
    for (long p : positions) {
      long[] wm = wordAndMask.apply(p);
      words[(int) wm[0]] |= wm[1];
    }
    if (!lookup(bits, type, key)) {
      throw new IllegalStateException("the lookup probes other bits than written for " + key);
    }
    for (long p : positions) {
      long[] wm = wordAndMask.apply(p);
      long before = words[(int) wm[0]];
      words[(int) wm[0]] &= ~wm[1];
      boolean still = lookup(bits, type, key);
      words[(int) wm[0]] = before;
      if (still) {
        throw new IllegalStateException("the lookup does not probe bit " + p + " for " + key);
      }
    }
    for (long p : positions) {
      words[(int) wordAndMask.apply(p)[0]] = 0;
    }
  }

  private static boolean lookup(BloomFilterBits bits, KeyType type, String key) {
    return type == KeyType.LONG
        ? bits.mightContainLong(Long.parseLong(key))
        : bits.mightContainString(key);
  }

  private static String hex(long value) {
    return String.format("%016x", value);
  }
}
