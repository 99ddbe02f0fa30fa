/**
 * The library applications embed: a {@link io.bloomoperator.watch.LiveBloomFilter} that follows the
 * snapshot the bloom-operator publishes and swaps each verified version in atomically.
 *
 * <p>Start with {@link io.bloomoperator.watch.BloomFilterWatcher}. Its public types are the API and
 * are listed, member by member, in sidecar-lib's {@code public-api.txt}; everything package-private
 * here (the watch loop, the manifest informer, the loaders, the local snapshot directory) is
 * implementation and may change in any release.
 */
package io.bloomoperator.watch;
