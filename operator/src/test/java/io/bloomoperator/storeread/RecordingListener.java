package io.bloomoperator.storeread;

import static org.awaitility.Awaitility.await;

import io.bloomoperator.watch.BloomFilterListener;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Records every swap and failure of a reader, for tests to assert on. */
public final class RecordingListener implements BloomFilterListener {

  /** The versions swapped in, in order. */
  public final List<Long> swaps = new CopyOnWriteArrayList<>();

  /** Every failed load, in order. */
  public final List<Exception> failures = new CopyOnWriteArrayList<>();

  /** Every failed load with its version, never cleared. */
  private final List<Failure> failed = new CopyOnWriteArrayList<>();

  private record Failure(long version, Exception exception) {}

  @Override
  public void onUpdate(long oldVersion, long newVersion, Duration loadDuration) {
    swaps.add(newVersion);
  }

  @Override
  public void onFailure(long version, Exception exception) {
    failed.add(new Failure(version, exception));
    failures.add(exception);
  }

  /**
   * The first failure of {@code version}, waiting up to {@code wait} for one: a reader retries a
   * version that failed, so a failure of an earlier version may still arrive after a test moved on.
   */
  public Exception awaitFailure(long version, Duration wait) {
    await().atMost(wait).until(() -> failed.stream().anyMatch(f -> f.version() == version));
    return failed.stream()
        .filter(f -> f.version() == version)
        .findFirst()
        .orElseThrow()
        .exception();
  }

  /** How many failures of {@code version} were reported so far. */
  public long failuresOf(long version) {
    return failed.stream().filter(f -> f.version() == version).count();
  }

  /** The first failure, waiting up to {@code wait} for one. */
  public Exception awaitFailure(Duration wait) {
    await().atMost(wait).until(() -> !failures.isEmpty());
    return failures.get(0);
  }
}
