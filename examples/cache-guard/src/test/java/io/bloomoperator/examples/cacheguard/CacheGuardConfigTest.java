package io.bloomoperator.examples.cacheguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CacheGuardConfigTest {

  @Test
  void defaults() {
    CacheGuardConfig config =
        CacheGuardConfig.fromEnvironment(Map.of("JDBC_URL", "jdbc:postgresql://db/shop"), "shop");
    assertThat(config.filterNamespace()).isEqualTo("shop");
    assertThat(config.filterName()).isEqualTo("products");
    assertThat(config.redisUrl().toString()).isEqualTo("redis://localhost:6379");
    assertThat(config.port()).isEqualTo(8080);
    assertThat(config.threads()).isEqualTo(16);
    assertThat(config.productTtl()).isEqualTo(Duration.ofMinutes(10));
    assertThat(config.notFoundTtl()).isEqualTo(Duration.ofSeconds(30));
    assertThat(config.jdbcUser()).isNull();
  }

  @Test
  void everyVariable() {
    CacheGuardConfig config =
        CacheGuardConfig.fromEnvironment(
            Map.of(
                "BLOOM_FILTER_NAMESPACE",
                "demo",
                "BLOOM_FILTER_NAME",
                "skus",
                "REDIS_URL",
                "redis://cache:6380",
                "JDBC_URL",
                "jdbc:postgresql://db/shop",
                "JDBC_USER",
                "reader",
                "JDBC_PASSWORD",
                "pw",
                "PORT",
                "9000",
                "HTTP_THREADS",
                "4",
                "PRODUCT_TTL",
                "1h",
                "NOT_FOUND_TTL",
                "5s"),
            "ignored");
    assertThat(config)
        .isEqualTo(
            new CacheGuardConfig(
                "demo",
                "skus",
                java.net.URI.create("redis://cache:6380"),
                "jdbc:postgresql://db/shop",
                "reader",
                "pw",
                9000,
                4,
                Duration.ofHours(1),
                Duration.ofSeconds(5)));
    assertThat(config.toString()).doesNotContain("pw");
  }

  @Test
  void missingOrMalformedValuesNameTheVariable() {
    assertThatThrownBy(() -> CacheGuardConfig.fromEnvironment(Map.of(), "shop"))
        .hasMessageContaining("JDBC_URL");
    assertThatThrownBy(() -> CacheGuardConfig.fromEnvironment(Map.of("JDBC_URL", "jdbc:x"), null))
        .hasMessageContaining("BLOOM_FILTER_NAMESPACE");
    assertThatThrownBy(
            () ->
                CacheGuardConfig.fromEnvironment(
                    Map.of("JDBC_URL", "jdbc:x", "NOT_FOUND_TTL", "30"), "shop"))
        .hasMessageContaining("NOT_FOUND_TTL");
    assertThatThrownBy(
            () ->
                CacheGuardConfig.fromEnvironment(
                    Map.of("JDBC_URL", "jdbc:x", "PORT", "http"), "shop"))
        .hasMessageContaining("PORT");
  }
}
