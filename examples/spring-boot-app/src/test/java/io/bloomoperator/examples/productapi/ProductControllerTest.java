package io.bloomoperator.examples.productapi;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.watch.LiveBloomFilter;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * The application's own test, as an application on the starter writes one: the whole application on
 * a random port, no cluster. The starter's test double stands in for the filter: fixed keys 1, 2, 3
 * (in the catalogue) and 1001 (not in it: a false positive the store has to answer).
 */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {"bloom.filters.productIds.fixed-keys=1,2,3,1001", "server.address=127.0.0.1"})
class ProductControllerTest {

  @Value("${local.server.port}")
  int port;

  @Autowired CatalogueProductStore store;
  @Autowired LiveBloomFilter<Long> productIds;

  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void absentIdsAreAnsweredByTheFilterWithoutTouchingTheStore() throws Exception {
    long before = store.lookups();
    HttpResponse<String> absent = get("/products/500"); // in the catalogue, not in the filter
    assertThat(absent.statusCode()).isEqualTo(404);
    assertThat(absent.headers().firstValue(ProductController.ANSWERED_BY)).hasValue("filter");
    assertThat(absent.body()).contains("\"status\":\"absent\"");
    assertThat(store.lookups()).isEqualTo(before);
  }

  @Test
  void idsTheFilterMayContainGoToTheStore() throws Exception {
    long before = store.lookups();
    HttpResponse<String> present = get("/products/2");
    assertThat(present.statusCode()).isEqualTo(200);
    assertThat(present.headers().firstValue(ProductController.ANSWERED_BY)).hasValue("store");
    assertThat(present.body()).contains("\"name\":\"Product 2\"");

    long falsePositivesBefore = productIds.falsePositives();
    HttpResponse<String> falsePositive = get("/products/1001");
    assertThat(falsePositive.statusCode()).isEqualTo(404);
    assertThat(falsePositive.headers().firstValue(ProductController.ANSWERED_BY)).hasValue("store");
    assertThat(store.lookups()).isEqualTo(before + 2);
    assertThat(productIds.falsePositives()).isEqualTo(falsePositivesBefore + 1);
  }

  @Test
  void readyWithoutAClusterBecauseTheTestDoubleIsReady() throws Exception {
    HttpResponse<String> readiness = get("/actuator/health/readiness");
    assertThat(readiness.statusCode()).isEqualTo(200);
    assertThat(readiness.body()).contains("\"bloomFilters\"").contains("\"UP\"");
  }

  private HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
