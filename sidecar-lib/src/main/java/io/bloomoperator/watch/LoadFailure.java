package io.bloomoperator.watch;

import io.bloomoperator.snapshot.LoadFailureReason;
import java.time.Instant;

/**
 * The last failed load of a {@link LiveBloomFilter}: what a health check may show. Holds no message
 * on purpose: messages may quote manifest content.
 *
 * @param version the version that failed, or {@link LiveBloomFilter#NO_VERSION} when the manifest
 *     itself could not be read
 * @param reason why
 * @param at when
 */
public record LoadFailure(long version, LoadFailureReason reason, Instant at) {}
