package io.bloomoperator.examples.productapi;

import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;
import org.springframework.stereotype.Component;

/**
 * Products 1..{@code catalogue.size}, computed instead of stored: the example needs no database to
 * show what the filter keeps away from one. Counts its lookups, which the tests compare with the
 * filter's answers.
 */
@Component
public class CatalogueProductStore implements ProductStore {

  private final long size;
  private final LongAdder lookups = new LongAdder();

  /** A catalogue of {@code properties.size()} products. */
  public CatalogueProductStore(CatalogueProperties properties) {
    this.size = properties.size();
  }

  @Override
  public Optional<Product> find(long id) {
    lookups.increment();
    return id >= 1 && id <= size ? Optional.of(new Product(id, "Product " + id)) : Optional.empty();
  }

  /** Lookups so far. */
  public long lookups() {
    return lookups.sum();
  }
}
