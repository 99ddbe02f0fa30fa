package io.bloomoperator.source;

/**
 * A source of {@code prefix-0 … prefix-(n-1)}, produced on demand like the lines of a text source,
 * so tests and benchmarks can build large filters without holding a key list. Counts its reads.
 */
public final class GeneratedSource implements KeySource {

  private final String prefix;
  private final long n;
  private int reads;

  public GeneratedSource(String prefix, long n) {
    this.prefix = prefix;
    this.n = n;
  }

  @Override
  public String description() {
    return n + " generated keys";
  }

  @Override
  public String changeToken() {
    return null;
  }

  @Override
  public void readKeys(KeySink sink) throws SourceException {
    reads++;
    for (long i = 0; i < n; i++) {
      sink.line(prefix + i);
    }
  }

  /** How often the keys were read. */
  public int reads() {
    return reads;
  }
}
