package io.bloomoperator.examples.cacheguard;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.sql.SQLException;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /products/{id}}: 200 with the product's JSON, 404 if there is no such product, 400 for
 * an ID that is not a number, 503 if the database failed. The {@value #SERVED_BY} header names the
 * layer that answered ({@code filter}, {@code cache} or {@code database}).
 */
final class ProductHandler implements HttpHandler {

  static final String PATH = "/products/";
  static final String SERVED_BY = "X-Served-By";

  private static final Logger LOG = LoggerFactory.getLogger(ProductHandler.class);

  private final ProductLookup lookup;

  ProductHandler(ProductLookup lookup) {
    this.lookup = lookup;
  }

  @Override
  public void handle(HttpExchange exchange) throws IOException {
    if (!HttpResponses.allowGetOnly(exchange)) {
      return;
    }
    String rawId = exchange.getRequestURI().getPath().substring(PATH.length());
    long id;
    try {
      id = Long.parseLong(rawId);
    } catch (NumberFormatException e) {
      // Not a product key at all: answered before the filter, so garbage never costs a look-up.
      HttpResponses.send(
          exchange,
          400,
          HttpResponses.JSON,
          Json.write(Map.of("error", "product id must be a 64-bit integer")));
      return;
    }
    LookupResult result;
    try {
      result = lookup.lookup(id);
    } catch (SQLException e) {
      LOG.warn("database look-up of product {} failed: {}", id, e.toString());
      HttpResponses.send(
          exchange, 503, HttpResponses.JSON, Json.write(Map.of("error", "database unavailable")));
      return;
    }
    exchange.getResponseHeaders().set(SERVED_BY, result.outcome().layer());
    if (result.outcome().found()) {
      HttpResponses.send(exchange, 200, HttpResponses.JSON, result.json());
    } else {
      HttpResponses.send(
          exchange,
          404,
          HttpResponses.JSON,
          Json.write(Map.of("error", "product not found", "id", id)));
    }
  }
}
