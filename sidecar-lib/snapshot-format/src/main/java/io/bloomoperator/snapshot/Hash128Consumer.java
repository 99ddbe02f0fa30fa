package io.bloomoperator.snapshot;

/**
 * Receives the two 64-bit halves of a murmur3_x64_128 hash. Hashing hands its result to a consumer
 * instead of returning an object so the hot lookup path allocates nothing, whether or not the JIT
 * manages to inline the hash function.
 */
@FunctionalInterface
interface Hash128Consumer {

  /**
   * @param h1 the low half (Guava's {@code HashCode.asBytes()} bytes 0..7, little-endian)
   * @param h2 the high half (bytes 8..15, little-endian)
   * @return whatever the consumer wants to pass back to the hashing call site
   */
  boolean accept(long h1, long h2);
}
