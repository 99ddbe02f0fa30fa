package io.bloomoperator.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.api.JdbcSourceSpec;
import io.bloomoperator.settings.OperatorSettings;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The operator's limits on jdbc sources: where they come from and what a spec cannot exceed. */
class JdbcSourceSettingsTest {

  @Test
  void settingsComeFromTheEnvironment() {
    JdbcSourceSettings defaults = JdbcSourceSettings.defaults();
    assertThat(defaults.egress()).isEqualTo(EgressPolicy.defaults());
    assertThat(defaults.maxValueBytes()).isEqualTo(HttpSourceSettings.DEFAULT_MAX_LINE_BYTES);
    assertThat(defaults.maxBatchBytes()).isEqualTo(8 << 20);
    assertThat(defaults.maxFetchSize()).isEqualTo(10_000);
    assertThat(defaults.maxQueryTime()).isEqualTo(Duration.ofMinutes(10));
    assertThat(
            JdbcSourceSettings.fromEnvironment(
                Map.of(
                    "BLOOM_HTTP_ALLOW", "10.0.0.0/8",
                    "BLOOM_HTTP_DENY", "10.96.0.0/12",
                    "BLOOM_JDBC_MAX_VALUE_BYTES", "1024",
                    "BLOOM_JDBC_MAX_BATCH_BYTES", "1048576",
                    "BLOOM_JDBC_MAX_FETCH_SIZE", "500",
                    "BLOOM_JDBC_MAX_QUERY_TIME", "2m")))
        .as("the egress settings are the http sources' own: one list for the administrator")
        .isEqualTo(
            new JdbcSourceSettings(
                EgressPolicy.of("10.0.0.0/8", "10.96.0.0/12"),
                1024,
                1 << 20,
                500,
                Duration.ofMinutes(2)));
    for (String name :
        new String[] {
          "BLOOM_JDBC_MAX_VALUE_BYTES", "BLOOM_JDBC_MAX_BATCH_BYTES", "BLOOM_JDBC_MAX_FETCH_SIZE"
        }) {
      assertThatThrownBy(() -> JdbcSourceSettings.fromEnvironment(Map.of(name, "0")))
          .hasMessageContaining(name);
    }
    assertThatThrownBy(
            () -> JdbcSourceSettings.fromEnvironment(Map.of("BLOOM_JDBC_MAX_QUERY_TIME", "later")))
        .hasMessageContaining("BLOOM_JDBC_MAX_QUERY_TIME");
    assertThat(
            OperatorSettings.fromEnvironment(Map.of("BLOOM_JDBC_MAX_FETCH_SIZE", "7"))
                .sources()
                .jdbc()
                .maxFetchSize())
        .isEqualTo(7);
  }

  /**
   * A spec above the operator's maxima is lowered, not refused: the filter still builds, within
   * what the administrator allows. Nothing connects here (a source is only constructed).
   */
  @Test
  void theSpecIsLoweredToTheOperatorsMaxima() {
    JdbcSourceSpec spec = new JdbcSourceSpec();
    spec.setUrl("jdbc:postgresql://db.example/x");
    spec.setQuery("select k from t");
    spec.setFetchSize(1_000_000);
    spec.setQueryTimeout("500h");
    JdbcSource source = new JdbcSource(spec, JdbcSourceSettings.defaults(), () -> null);
    assertThat(source.effectiveFetchSize()).isEqualTo(10_000);
    assertThat(source.effectiveQueryTimeout()).isEqualTo(Duration.ofMinutes(10));
    spec.setFetchSize(50);
    spec.setQueryTimeout("20s");
    source = new JdbcSource(spec, JdbcSourceSettings.defaults(), () -> null);
    assertThat(source.effectiveFetchSize()).isEqualTo(50);
    assertThat(source.effectiveQueryTimeout()).isEqualTo(Duration.ofSeconds(20));
  }

  @Test
  void utf8LengthIsCountedWithoutEncoding() {
    assertThat(Utf8.length("abc", 100)).isEqualTo(3);
    assertThat(Utf8.length("é", 100)).isEqualTo(2);
    assertThat(Utf8.length("€", 100)).isEqualTo(3);
    assertThat(Utf8.length("😀", 100)).isEqualTo(4);
    assertThat(Utf8.length("\uD83D", 100)).as("an unpaired surrogate").isEqualTo(3);
    assertThat(Utf8.length("€€€", 5)).as("stops once above the limit").isGreaterThan(5);
    assertThat(Utf8.length("x".repeat(1000), 10)).isGreaterThan(10);
    for (String s : new String[] {"plain", "ünïcödé", "日本語", "a😀b"}) {
      assertThat(Utf8.length(s, 1000))
          .as(s)
          .isEqualTo(s.getBytes(java.nio.charset.StandardCharsets.UTF_8).length);
    }
  }
}
