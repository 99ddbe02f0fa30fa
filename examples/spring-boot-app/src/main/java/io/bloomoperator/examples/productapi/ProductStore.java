package io.bloomoperator.examples.productapi;

import java.util.Optional;

/** Where products live: in a real service a database, the expensive lookup the filter saves. */
public interface ProductStore {

  /** The product with this ID, if there is one. */
  Optional<Product> find(long id);
}
