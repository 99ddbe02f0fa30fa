package io.bloomoperator.source;

import io.bloomoperator.api.JdbcSourceSpec;
import io.bloomoperator.snapshot.KeyType;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;

/**
 * One jdbc read in a JVM of its own, so that a test can give it a small heap and see whether it
 * survives: {@code url user password fetchSize query}. Prints {@code REASON <reason>} or {@code
 * KEYS <count>}, then {@code PEAK_HEAP <bytes>} (the sum of the heap pools' peaks), and exits 0;
 * with {@code -XX:+ExitOnOutOfMemoryError} an out-of-memory error exits 3 instead.
 */
public final class JdbcReadChild {

  private JdbcReadChild() {}

  public static void main(String[] args) throws Exception {
    JdbcSourceSpec spec = new JdbcSourceSpec();
    spec.setUrl(args[0]);
    spec.setFetchSize(Integer.parseInt(args[3]));
    spec.setQuery(args[4]);
    // Keys are dropped: only what the source itself holds counts.
    LineParser parser = new LineParser(KeyType.STRING, new DiscardedKeys(), 0);
    try {
      new JdbcSource(spec, JdbcTestSettings.LOOPBACK, () -> new JdbcCredentials(args[1], args[2]))
          .readKeys(parser);
      System.out.println("KEYS " + parser.keys());
    } catch (SourceException e) {
      System.out.println("REASON " + e.reason());
      System.out.println("MESSAGE " + e.getMessage());
    }
    long peak = 0;
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        peak += pool.getPeakUsage().getUsed();
      }
    }
    System.out.println("PEAK_HEAP " + peak);
    System.exit(0);
  }
}
