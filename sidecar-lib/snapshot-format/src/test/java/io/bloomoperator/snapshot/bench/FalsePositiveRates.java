package io.bloomoperator.snapshot.bench;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SplitBlockSizing;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Locale;

/**
 * Measured false-positive rates of both layouts, sized as the operator sizes them, beside the
 * target: n keys in, 10M never-inserted keys probed (100M below a target of 1e-3, where 10M probes
 * see too few hits). Beside it the rate the filter's own bits give: for split-block the exact mean
 * over blocks of the product of the eight words' fill; for Guava's layout (fill)^k. Not a JMH
 * benchmark: it counts, it does not time. Prints a Markdown table (docs/benchmarks.md).
 */
public final class FalsePositiveRates {

  private static final int PROBES = 10_000_000;
  private static final int LOW_RATE_PROBES = 100_000_000;

  private FalsePositiveRates() {}

  public static void main(String[] args) {
    System.out.println(
        "| keys | n | target | layout | bits/key | k | sizing's expected | from the bits | probes |"
            + " measured |");
    System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for (KeyType type : KeyType.values()) {
      row(type, 1_000_000, 0.01);
      row(type, 10_000_000, 0.01);
    }
    for (double fpp : new double[] {0.1, 0.001, 0.0001}) {
      row(KeyType.LONG, 1_000_000, fpp);
    }
  }

  private static void row(KeyType type, int n, double fpp) {
    BloomFilterSizing guavaSizing = BloomFilterSizing.forKeys(n, fpp);
    BloomFilterBits guava = fill(BloomFilterBits.builder(type, guavaSizing), type, n);
    print(type, n, fpp, "Guava", guava, guavaSizing.expectedFpp());
    SplitBlockSizing splitSizing = SplitBlockSizing.forKeys(n, fpp);
    BloomFilterBits split = fill(BloomFilterBits.builder(type, splitSizing), type, n);
    print(type, n, fpp, "SplitBlock", split, splitSizing.expectedFpp());
  }

  private static BloomFilterBits fill(BloomFilterBits.Builder builder, KeyType type, int n) {
    for (int i = 0; i < n; i++) {
      if (type == KeyType.STRING) {
        builder.putString(Keys.present(i));
      } else {
        builder.putLong(Keys.presentLong(i));
      }
    }
    return builder.build();
  }

  private static void print(
      KeyType type, int n, double fpp, String layout, BloomFilterBits bits, double expected) {
    int probes = fpp < 1e-3 ? LOW_RATE_PROBES : PROBES;
    long hits = 0;
    for (int i = 0; i < probes; i++) {
      boolean hit =
          type == KeyType.STRING
              ? bits.mightContainString(Keys.absent(i))
              : bits.mightContainLong(Keys.absentLong(i));
      hits += hit ? 1 : 0;
    }
    System.out.printf(
        Locale.ROOT,
        "| %s | %s | %s | %s | %.2f | %d | %.4g | %.4g | %dM | %.4g |%n",
        type.crdName(),
        n >= 1_000_000 ? n / 1_000_000 + "M" : Integer.toString(n),
        fpp,
        layout,
        bits.numBits() / (double) n,
        bits.numHashFunctions(),
        expected,
        fromBits(bits),
        probes / 1_000_000,
        hits / (double) probes);
  }

  /** The false-positive rate the bits themselves give a random absent key. */
  private static double fromBits(BloomFilterBits bits) {
    byte[] payload = SnapshotEncoder.toByteArray(bits);
    if (bits.format() == FilterFormat.GUAVA) {
      return bits.currentFpp();
    }
    ByteBuffer words = ByteBuffer.wrap(payload).order(ByteOrder.LITTLE_ENDIAN);
    int blocks = payload.length / 32;
    double sum = 0;
    for (int b = 0; b < blocks; b++) {
      double product = 1;
      for (int w = 0; w < 8; w++) {
        product *= Integer.bitCount(words.getInt(b * 32 + w * 4)) / 32.0;
      }
      sum += product;
    }
    return sum / blocks;
  }
}
