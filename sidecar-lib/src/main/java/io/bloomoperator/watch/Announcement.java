package io.bloomoperator.watch;

import io.bloomoperator.snapshot.Manifest;

/**
 * A manifest as read from its ConfigMap, already checked against the reader's limits and trusted
 * keys, with the exact text and signature it came with (kept for the local snapshot directory).
 *
 * @param signature the {@code manifest.sig} data, or null if the ConfigMap has none
 */
record Announcement(Manifest manifest, String json, String signature) {

  long version() {
    return manifest.version();
  }
}
