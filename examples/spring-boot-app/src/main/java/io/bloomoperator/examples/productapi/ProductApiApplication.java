package io.bloomoperator.examples.productapi;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;

/**
 * A product API whose {@code productIds} filter (a {@code LiveBloomFilter<Long>} bean from the
 * starter, configured in application.yaml) answers "absent" for IDs that were never published,
 * before the store is asked.
 */
@SpringBootApplication
@EnableConfigurationProperties(CatalogueProperties.class)
public class ProductApiApplication {

  /** Starts the service. */
  public static void main(String[] args) {
    SpringApplication.run(ProductApiApplication.class, args);
  }
}
