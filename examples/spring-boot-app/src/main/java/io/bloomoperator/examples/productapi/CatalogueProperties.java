package io.bloomoperator.examples.productapi;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code catalogue.*}: the size of the in-memory catalogue standing in for the product database.
 *
 * @param size products 1..size exist
 */
@ConfigurationProperties("catalogue")
public record CatalogueProperties(long size) {}
