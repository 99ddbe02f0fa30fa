package io.bloomoperator.changes;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Who may hold how much of the counting shadows' budget: the operator's total ({@code
 * BLOOM_STREAM_COUNTING_BYTES}), one namespace's bound ({@code
 * BLOOM_STREAM_NAMESPACE_COUNTING_BYTES}) and, while a namespace is refused for lack of room in the
 * total, every namespace's fair share of it. Only decides and remembers; the files are {@link
 * CountingShadows}'.
 *
 * <p><b>The rule</b>, checked in this order when a full build asks for a shadow of {@code need}
 * bytes for a filter of namespace N (the filter's previous shadow already given back):
 *
 * <ol>
 *   <li>N's other shadows and {@code need} over the namespace bound: refused.
 *   <li>Another namespace <em>waits</em> (rule 3 refused one of its filters and that filter has not
 *       got a shadow since), N's other shadows and {@code need} are over N's fair share, and what
 *       would be left free does not hold every waiting shadow: refused, so N gives the room back.
 *       The fair share is the total divided by the namespaces holding a shadow or waiting, N
 *       included.
 *   <li>All shadows and {@code need} over the total: refused, and the filter waits.
 *   <li>Otherwise granted.
 * </ol>
 *
 * <p>A namespace's shadows are replaced only at its full builds, so one over its fair share gives
 * room back at its next full build, and a namespace that waits gets its share at its own next full
 * build after that. Every namespace within its share is then served: the shares together are the
 * total. A waiting filter stops waiting when it gets a shadow, is refused by rule 1 or 2, stops
 * counting or is deleted; at most {@link #MAX_WAITING} filters wait at once (a refusal beyond that
 * is not remembered), so the table is bounded whatever tenants create.
 */
final class CountingRoom {

  /** Filters remembered as waiting for room, at most. */
  static final int MAX_WAITING = 4096;

  private record Claim(String namespace, long bytes) {}

  private final long maxBytes;
  private final long maxNamespaceBytes;
  private final Map<String, Claim> held = new HashMap<>();
  private final Map<String, Claim> waiting = new HashMap<>();

  CountingRoom(long maxBytes, long maxNamespaceBytes) {
    this.maxBytes = maxBytes;
    this.maxNamespaceBytes = maxNamespaceBytes;
  }

  /**
   * Takes {@code need} bytes for filter {@code uid} of {@code namespace} (it must hold none: {@link
   * #release} first); null when granted, else why not (the operator's own text: sizes and setting
   * names, never another namespace's name).
   */
  String take(String uid, String namespace, long need) {
    if (held.containsKey(uid)) {
      throw new IllegalStateException("the filter's previous shadow was not given back");
    }
    long mine = heldBy(namespace);
    long inAll = held.values().stream().mapToLong(Claim::bytes).sum();
    if (mine + need > maxNamespaceBytes) {
      waiting.remove(uid);
      return "the counting shadow needs "
          + need
          + " bytes and the namespace's shadows hold "
          + mine
          + " of BLOOM_STREAM_NAMESPACE_COUNTING_BYTES="
          + maxNamespaceBytes;
    }
    long fair = fairShare(namespace);
    long othersWaiting =
        waiting.values().stream()
            .filter(w -> !w.namespace().equals(namespace))
            .mapToLong(Claim::bytes)
            .sum();
    if (othersWaiting > 0 && mine + need > fair && inAll + need + othersWaiting > maxBytes) {
      waiting.remove(uid);
      return "the namespace's counting shadows would hold "
          + (mine + need)
          + " bytes, more than its fair share of "
          + fair
          + " of BLOOM_STREAM_COUNTING_BYTES="
          + maxBytes
          + " while another namespace waits for room; given back at this full build";
    }
    if (inAll + need > maxBytes) {
      if (waiting.size() < MAX_WAITING || waiting.containsKey(uid)) {
        waiting.put(uid, new Claim(namespace, need));
      }
      return "the counting shadow needs "
          + need
          + " bytes and the operator's shadows hold "
          + inAll
          + " of BLOOM_STREAM_COUNTING_BYTES="
          + maxBytes
          + "; waiting for the namespaces over their fair share to give room back at their next"
          + " full build";
    }
    waiting.remove(uid);
    held.put(uid, new Claim(namespace, need));
    return null;
  }

  /** Filter {@code uid}'s shadow is gone: its bytes are free; it may still be waiting. */
  void release(String uid) {
    held.remove(uid);
  }

  /** Filter {@code uid} no longer asks for a shadow: it holds none and does not wait. */
  void gone(String uid) {
    held.remove(uid);
    waiting.remove(uid);
  }

  /** Bytes all shadows hold. */
  long bytes() {
    return held.values().stream().mapToLong(Claim::bytes).sum();
  }

  /** Whether a filter of {@code namespace} waits for room. */
  boolean waits(String namespace) {
    return waiting.values().stream().anyMatch(w -> w.namespace().equals(namespace));
  }

  /**
   * The total divided among the namespaces holding a shadow or waiting for one, {@code namespace}
   * included.
   */
  long fairShare(String namespace) {
    Set<String> contending = new HashSet<>();
    held.values().forEach(c -> contending.add(c.namespace()));
    waiting.values().forEach(c -> contending.add(c.namespace()));
    contending.add(namespace);
    return maxBytes / contending.size();
  }

  private long heldBy(String namespace) {
    return held.values().stream()
        .filter(c -> c.namespace().equals(namespace))
        .mapToLong(Claim::bytes)
        .sum();
  }
}
