package io.bloomoperator.source;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Partition connections beyond each build's own: a namespace asking for many gets its share and no
 * more, never waits, and leaves the others theirs.
 */
class JdbcConnectionSharesTest {

  @Test
  void aNamespaceAskingFor64GetsItsShareAndAnotherNamespaceStillGetsItsOwn() {
    JdbcConnectionShares shares = new JdbcConnectionShares(8, 4);
    JdbcConnectionShares.Held greedy = shares.take("greedy", 63);
    assertThat(greedy.count()).isEqualTo(4);
    JdbcConnectionShares.Held more = shares.take("greedy", 63);
    assertThat(more.count()).as("a second read of the same namespace: share used up").isZero();
    JdbcConnectionShares.Held other = shares.take("other", 63);
    assertThat(other.count()).isEqualTo(4);
    assertThat(shares.inUse()).isEqualTo(8);
    JdbcConnectionShares.Held third = shares.take("third", 3);
    assertThat(third.count())
        .as("the operator's total is used up: reads on one connection")
        .isZero();
    greedy.close();
    greedy.close(); // once
    assertThat(shares.heldBy("greedy")).isZero();
    assertThat(shares.inUse()).isEqualTo(4);
    assertThat(shares.take("third", 3).count()).isEqualTo(3);
    other.close();
    more.close();
    third.close();
  }

  @Test
  void theShareIsAtMostTheTotalAndZeroMeansOneConnectionPerRead() {
    assertThat(new JdbcConnectionShares(2, 4).take("a", 10).count()).isEqualTo(2);
    assertThat(new JdbcConnectionShares(0, 0).take("a", 10).count()).isZero();
  }

  @Test
  void theSettingsReadTheEnvironmentAndShareOneTable() {
    JdbcSourceSettings settings =
        JdbcSourceSettings.fromEnvironment(
            java.util.Map.of(
                "BLOOM_JDBC_PARTITION_CONNECTIONS", "6",
                "BLOOM_JDBC_PARTITION_CONNECTIONS_PER_NAMESPACE", "2"));
    assertThat(settings.partitionConnections().total()).isEqualTo(6);
    assertThat(settings.partitionConnections().perNamespace()).isEqualTo(2);
    assertThat(settings.withEgress(EgressPolicy.of(null, null)).partitionConnections())
        .isSameAs(settings.partitionConnections());
    JdbcSourceSettings defaults = JdbcSourceSettings.defaults();
    assertThat(defaults.partitionConnections().total()).isEqualTo(8);
    assertThat(defaults.partitionConnections().perNamespace()).isEqualTo(4);
  }
}
