package io.bloomoperator.objectstore;

import io.bloomoperator.api.BloomStore;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * Which other {@link BloomStore}s share a store's location ({@link StoreLocation#overlaps}): the
 * same server, bucket and prefix, or one prefix nested in the other.
 *
 * <p>Such stores are flagged, not refused. Refusing one would stop the filters publishing to it and
 * the readers loading from it (which of two stores to refuse is arbitrary, and an alias is how a
 * store is renamed without moving objects); what sharing could break is kept safe where it happens:
 * the clean-up compares stores by location and never deletes what the published or canary manifest
 * names in any store ({@link io.bloomoperator.publish.SnapshotJanitor}), and keys of different
 * namespaces and filters never meet in any prefix layout ({@link
 * io.bloomoperator.snapshot.StoreObjectKeys}). The flag tells the administrator that store budgets
 * ({@code namespaceBudgetBytes}) of overlapping stores count the same objects.
 */
public final class SharedLocations {

  /** Condition type on a BloomStore: True while another BloomStore's location overlaps its own. */
  public static final String CONDITION = "LocationShared";

  /** Reason: another BloomStore has exactly this location. */
  public static final String SAME = "SameLocation";

  /** Reason: another BloomStore's prefix holds this one's or lies inside it. */
  public static final String NESTED = "NestedLocation";

  /** Reason: no other BloomStore overlaps this one. */
  public static final String OWN = "OwnLocation";

  /** The event on each store when the overlap is first seen (or its partners change). */
  public static final String EVENT = "LocationShared";

  /** At most this many partner names in a message; the rest are counted. */
  private static final int NAMED = 10;

  private SharedLocations() {}

  /**
   * What {@code store} shares with {@code all} (which may include it).
   *
   * @param reason {@link #SAME}, {@link #NESTED} or {@link #OWN}
   * @param others the names of the overlapping stores, sorted
   */
  public record Overlap(String reason, List<String> others) {

    /** Whether any other store overlaps. */
    public boolean shared() {
      return !others.isEmpty();
    }

    /** The condition's message (names of BloomStores only, never endpoints or buckets). */
    public String message() {
      if (others.isEmpty()) {
        return "no other BloomStore has this endpoint, bucket and prefix or one nested in it";
      }
      String names =
          String.join(", ", others.subList(0, Math.min(NAMED, others.size())))
              + (others.size() > NAMED ? " and " + (others.size() - NAMED) + " more" : "");
      return (SAME.equals(reason)
              ? "BloomStore(s) " + names + " have the same endpoint, bucket and prefix"
              : "BloomStore(s) " + names + " share the endpoint and bucket with a nested prefix")
          + ": their objects are listed, budgeted and cleaned as one location's (the clean-up"
          + " compares locations, never names); give each store its own bucket or prefix"
          + " (docs/object-store.md)";
    }
  }

  /** The stores among {@code all} whose location overlaps {@code store}'s. */
  public static Overlap of(BloomStore store, Collection<BloomStore> all) {
    if (store.getSpec() == null) {
      return new Overlap(OWN, List.of());
    }
    StoreLocation here = StoreLocation.of(store.getSpec());
    boolean same = false;
    java.util.TreeSet<String> others = new java.util.TreeSet<>();
    for (BloomStore other : all) {
      if (other.getSpec() == null
          || Objects.equals(other.getMetadata().getName(), store.getMetadata().getName())) {
        continue;
      }
      StoreLocation there = StoreLocation.of(other.getSpec());
      if (here.overlaps(there)) {
        others.add(other.getMetadata().getName());
        same |= here.equals(there);
      }
    }
    return new Overlap(others.isEmpty() ? OWN : same ? SAME : NESTED, List.copyOf(others));
  }
}
