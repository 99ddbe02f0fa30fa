package io.bloomoperator.watch;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Remembers every callback, for assertions. */
final class RecordingListener implements BloomFilterListener {

  record Update(long oldVersion, long newVersion, Duration loadDuration) {}

  record Failure(long version, Exception exception) {}

  final List<Update> updates = new CopyOnWriteArrayList<>();
  final List<Failure> failures = new CopyOnWriteArrayList<>();

  @Override
  public void onUpdate(long oldVersion, long newVersion, Duration loadDuration) {
    updates.add(new Update(oldVersion, newVersion, loadDuration));
  }

  @Override
  public void onFailure(long version, Exception exception) {
    failures.add(new Failure(version, exception));
  }
}
