package io.bloomoperator.examples.cacheguard;

import java.sql.SQLException;
import java.util.Optional;

/** The source of truth for products: the database. */
public interface ProductRepository {

  /**
   * Reads one product by primary key.
   *
   * @return the product, or empty if no row has this id
   * @throws SQLException if the database cannot answer
   */
  Optional<Product> findById(long id) throws SQLException;
}
