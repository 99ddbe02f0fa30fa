package io.bloomoperator.snapshot.bench;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.SplitBlockSizing;
import java.util.Locale;

/**
 * Measured false-positive rates of both layouts, sized as the operator sizes them, beside the
 * target: n keys in, 10M never-inserted keys probed. Not a JMH benchmark: it counts, it does not
 * time. Prints a Markdown table (docs/benchmarks.md).
 */
public final class FalsePositiveRates {

  private static final int PROBES = 10_000_000;

  private FalsePositiveRates() {}

  public static void main(String[] args) {
    System.out.println(
        "| keys | n | target | layout | bits/key | k | expected at n | measured (10M absent) |");
    System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- |");
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
    long hits = 0;
    for (int i = 0; i < PROBES; i++) {
      boolean hit =
          type == KeyType.STRING
              ? bits.mightContainString(Keys.absent(i))
              : bits.mightContainLong(Keys.absentLong(i));
      hits += hit ? 1 : 0;
    }
    System.out.printf(
        Locale.ROOT,
        "| %s | %s | %s | %s | %.2f | %d | %.4g | %.4g |%n",
        type.crdName(),
        n >= 1_000_000 ? n / 1_000_000 + "M" : Integer.toString(n),
        fpp,
        layout,
        bits.numBits() / (double) n,
        bits.numHashFunctions(),
        expected,
        hits / (double) PROBES);
  }
}
