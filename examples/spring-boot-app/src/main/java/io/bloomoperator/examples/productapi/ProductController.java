package io.bloomoperator.examples.productapi;

import io.bloomoperator.watch.LiveBloomFilter;
import java.util.Optional;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /products/{id}}: the filter first; only IDs it may contain reach the store. The header
 * {@value #ANSWERED_BY} says which one answered ({@code filter} or {@code store}).
 */
@RestController
public class ProductController {

  /** Response header naming what answered: {@code filter} or {@code store}. */
  public static final String ANSWERED_BY = "X-Answered-By";

  private final LiveBloomFilter<Long> productIds;
  private final ProductStore store;

  /** The controller over the starter's {@code productIds} filter bean and the store. */
  public ProductController(LiveBloomFilter<Long> productIds, ProductStore store) {
    this.productIds = productIds;
    this.store = store;
  }

  /** The product, or 404 "absent". */
  @GetMapping("/products/{id}")
  public ResponseEntity<?> product(@PathVariable long id) {
    if (!productIds.mightContain(id)) {
      return absent(id, "filter"); // definitely not published: the store is not asked
    }
    Optional<Product> product = store.find(id);
    // Feeds the observed false-positive rate (bloomreader_fpp_observed).
    productIds.recordOutcome(id, product.isPresent());
    return product
        .<ResponseEntity<?>>map(p -> ResponseEntity.ok().header(ANSWERED_BY, "store").body(p))
        .orElseGet(() -> absent(id, "store"));
  }

  private static ResponseEntity<Absent> absent(long id, String answeredBy) {
    return ResponseEntity.status(HttpStatus.NOT_FOUND)
        .header(ANSWERED_BY, answeredBy)
        .body(new Absent(id, "absent"));
  }

  /** The body of a 404. */
  public record Absent(long id, String status) {}
}
