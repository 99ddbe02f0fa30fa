package io.bloomoperator.readers;

import java.util.ArrayList;
import java.util.List;

/**
 * Picks at most {@code limit} items from several queues, one from each non-empty queue in turn:
 * every queue gets an equal share of the limit, and what a short queue leaves unused goes to the
 * longer ones. A queue of any length therefore takes no more than its share while others still
 * wait, which is what keeps one namespace's pod checks from crowding out another's. Pure.
 */
final class FairTurns {

  private FairTurns() {}

  /**
   * The items picked, in the order of the turns: the heads of every queue first (in the order of
   * {@code queues}), then the second items, and so on, until {@code limit} items or none are left.
   */
  static <T> List<T> take(List<? extends List<? extends T>> queues, int limit) {
    List<T> picked = new ArrayList<>(Math.max(0, Math.min(limit, 1024)));
    List<List<? extends T>> waiting = new ArrayList<>(queues);
    for (int depth = 0; picked.size() < limit && !waiting.isEmpty(); depth++) {
      final int turn = depth;
      waiting.removeIf(queue -> turn >= queue.size());
      for (List<? extends T> queue : waiting) {
        picked.add(queue.get(turn));
        if (picked.size() == limit) {
          break;
        }
      }
    }
    return picked;
  }
}
