package io.bloomoperator.examples.cacheguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.examples.cacheguard.LookupResult.Outcome;
import java.math.BigDecimal;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The guard's decision order with in-memory stand-ins for the filter, Redis and the database. */
class ProductLookupTest {

  private final Map<Long, Product> rows =
      new HashMap<>(
          Map.of(
              1L, new Product(1, "Espresso cup", new BigDecimal("4.50")),
              2L, new Product(2, "Milk jug", new BigDecimal("12.00"))));
  private final List<Long> queried = new ArrayList<>();
  private final FakeCache cache = new FakeCache();
  private final GuardStats stats = new GuardStats();
  private boolean databaseDown;

  private final ProductRepository database =
      id -> {
        queried.add(id);
        if (databaseDown) {
          throw new SQLException("connection refused");
        }
        return Optional.ofNullable(rows.get(id));
      };

  /** What the filter was told about its maybe-present answers, in order. */
  private final List<String> outcomes = new ArrayList<>();

  /** Filter "contains" 1, 2 and 3 (3 is a false positive: no such row). */
  private final ProductLookup lookup =
      new ProductLookup(
          id -> Set.of(1L, 2L, 3L).contains(id),
          cache,
          database,
          stats,
          (id, found) -> outcomes.add(id + (found ? " found" : " absent")));

  @Test
  void definitelyAbsentIdsTouchNeitherCacheNorDatabase() throws SQLException {
    for (long id = 100; id < 200; id++) {
      assertThat(lookup.lookup(id).outcome()).isEqualTo(Outcome.FILTER_REJECTED);
    }
    assertThat(queried).isEmpty();
    assertThat(cache.reads).isZero();
    assertThat(stats.filterRejections()).isEqualTo(100);
    assertThat(stats.lookups()).isEqualTo(100);
  }

  @Test
  void presentIdGoesToDatabaseOnceThenComesFromCache() throws SQLException {
    LookupResult first = lookup.lookup(1);
    assertThat(first.outcome()).isEqualTo(Outcome.DB_FOUND);
    assertThat(first.json()).isEqualTo("{\"id\":1,\"name\":\"Espresso cup\",\"price\":4.50}");
    assertThat(cache.values).containsEntry(1L, first.json());

    LookupResult second = lookup.lookup(1);
    assertThat(second).isEqualTo(new LookupResult(Outcome.CACHE_HIT, first.json()));
    assertThat(queried).containsExactly(1L);
    assertThat(stats.dbQueries()).isEqualTo(1);
    assertThat(stats.cacheHits()).isEqualTo(1);
    assertThat(stats.cacheMisses()).isEqualTo(1);
  }

  @Test
  void falsePositiveIsCachedAsNotFound() throws SQLException {
    assertThat(lookup.lookup(3).outcome()).isEqualTo(Outcome.DB_NOT_FOUND);
    assertThat(cache.notFound).containsExactly(3L);
    assertThat(lookup.lookup(3).outcome()).isEqualTo(Outcome.CACHE_NOT_FOUND);
    assertThat(queried).containsExactly(3L);
    assertThat(stats.dbNotFound()).isEqualTo(1);
    assertThat(stats.cacheNotFoundHits()).isEqualTo(1);
  }

  @Test
  void everyKnownOutcomeOfAMaybePresentAnswerIsReported() throws SQLException {
    lookup.lookup(1); // database: found
    lookup.lookup(1); // cache: found
    lookup.lookup(3); // database: no row (the false positive)
    lookup.lookup(3); // cache: "not found" marker
    lookup.lookup(100); // filter: definitely absent, nothing to report
    databaseDown = true;
    assertThatThrownBy(() -> lookup.lookup(2)).isInstanceOf(SQLException.class); // unknown
    assertThat(outcomes).containsExactly("1 found", "1 found", "3 absent", "3 absent");
  }

  @Test
  void unreachableCacheFallsBackToDatabase() throws SQLException {
    cache.down = true;
    assertThat(lookup.lookup(2).outcome()).isEqualTo(Outcome.DB_FOUND);
    assertThat(lookup.lookup(2).outcome()).isEqualTo(Outcome.DB_FOUND);
    assertThat(queried).containsExactly(2L, 2L);
    assertThat(stats.cacheErrors())
        .as("one failed read and one failed write per look-up")
        .isEqualTo(4);
    // Absent IDs are still kept away from the database.
    assertThat(lookup.lookup(99).outcome()).isEqualTo(Outcome.FILTER_REJECTED);
    assertThat(queried).hasSize(2);
  }

  @Test
  void databaseFailureIsCountedAndNothingIsCached() {
    databaseDown = true;
    assertThatThrownBy(() -> lookup.lookup(1)).isInstanceOf(SQLException.class);
    assertThat(stats.dbErrors()).isEqualTo(1);
    assertThat(cache.values).isEmpty();
    assertThat(cache.notFound).isEmpty();
  }

  private static final class FakeCache implements ProductCache {
    final Map<Long, String> values = new HashMap<>();
    final List<Long> notFound = new ArrayList<>();
    int reads;
    boolean down;

    @Override
    public Entry get(long id) {
      reads++;
      check();
      if (notFound.contains(id)) {
        return new NotFound();
      }
      String json = values.get(id);
      return json == null ? new Miss() : new Found(json);
    }

    @Override
    public void putFound(long id, String json) {
      check();
      values.put(id, json);
    }

    @Override
    public void putNotFound(long id) {
      check();
      notFound.add(id);
    }

    private void check() {
      if (down) {
        throw new IllegalStateException("redis down");
      }
    }
  }
}
