package io.bloomoperator.watch;

import java.time.Clock;
import java.time.Duration;

/**
 * When a {@link WatchLoop} acts: the one thread it runs on, the backoff between retries of a failed
 * load, the interval of the resync poll ({@link Duration#ZERO}: none) and the clock manifests' age
 * is measured with.
 */
record Pacing(WatcherThread thread, Backoff retryBackoff, Duration resync, Clock clock) {}
