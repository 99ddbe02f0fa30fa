package io.bloomoperator.examples.cacheguard;

import java.math.BigDecimal;
import java.util.Objects;

/**
 * One row of the {@code products} table, as served by {@code GET /products/{id}}.
 *
 * @param id primary key; also the key of the Bloom filter (keyType Long)
 * @param name display name
 * @param price price in the shop's currency
 */
public record Product(long id, String name, BigDecimal price) {

  /** Checks the non-null columns. */
  public Product {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(price, "price");
  }
}
