package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class SnapshotNamesTest {

  /** Kubernetes DNS subdomain (object names) and label value syntax. */
  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  private static final Pattern LABEL_VALUE =
      Pattern.compile("([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?");

  @Test
  void shortNames() {
    assertThat(SnapshotNames.manifestName("orders")).isEqualTo("orders-bloom");
    assertThat(SnapshotNames.chunkName("orders", 12, 3)).isEqualTo("orders-bloom-v12-3");
    assertThat(SnapshotNames.filterLabelValue("orders")).isEqualTo("orders");
    assertThat(SnapshotNames.MANIFEST_DATA_KEY).isEqualTo("manifest.json");
    assertThat(SnapshotNames.CHUNK_DATA_KEY).isEqualTo("chunk");
  }

  @Test
  void labelsAndSelectors() {
    assertThat(SnapshotNames.manifestLabels("orders"))
        .containsOnly(
            entry("app.kubernetes.io/managed-by", "bloom-operator"),
            entry("bloomoperator.io/filter", "orders"),
            entry("bloomoperator.io/role", "manifest"));
    assertThat(SnapshotNames.chunkLabels("orders", 7))
        .containsOnly(
            entry("app.kubernetes.io/managed-by", "bloom-operator"),
            entry("bloomoperator.io/filter", "orders"),
            entry("bloomoperator.io/role", "chunk"),
            entry("bloomoperator.io/version", "7"));
    assertThat(SnapshotNames.filterSelector("orders"))
        .isEqualTo("app.kubernetes.io/managed-by=bloom-operator,bloomoperator.io/filter=orders");
    assertThat(SnapshotNames.manifestSelector("orders"))
        .endsWith(",bloomoperator.io/role=manifest");
    assertThat(SnapshotNames.chunkSelector("orders", 7))
        .isEqualTo(
            "app.kubernetes.io/managed-by=bloom-operator,bloomoperator.io/filter=orders,"
                + "bloomoperator.io/role=chunk,bloomoperator.io/version=7");
  }

  @Test
  void namesAtTheLimitAreKeptWhole() {
    String filter = "a".repeat(253 - "-bloom".length());
    assertThat(SnapshotNames.manifestName(filter)).isEqualTo(filter + "-bloom").hasSize(253);
    String label = "b".repeat(63);
    assertThat(SnapshotNames.filterLabelValue(label)).isEqualTo(label);
  }

  @Test
  void longNamesAreCutWithAHashAndStayUniqueAndValid() {
    String base = "team.payments-" + "x".repeat(230);
    String a = base + "-alpha";
    String b = base + "-bravo";
    // The longest version a name can carry: the end of the one range.
    for (String filter : new String[] {a, b, "a".repeat(253), "ab.".repeat(84)}) {
      String manifest = SnapshotNames.manifestName(filter);
      String chunk = SnapshotNames.chunkName(filter, SnapshotVersions.MAX, Integer.MAX_VALUE);
      String label = SnapshotNames.filterLabelValue(filter);
      String hash = SnapshotNames.shortHash(filter);
      assertThat(hash).matches("[0-9a-f]{16}");
      assertThat(manifest)
          .hasSizeLessThanOrEqualTo(253)
          .endsWith("-" + hash + ".bloom")
          .matches(DNS_SUBDOMAIN);
      assertThat(chunk)
          .hasSizeLessThanOrEqualTo(253)
          .endsWith("-" + hash + ".bloom-v" + SnapshotVersions.MAX + "-" + Integer.MAX_VALUE)
          .matches(DNS_SUBDOMAIN);
      assertThat(SnapshotNames.deltaChunkName(filter, SnapshotVersions.MAX, Integer.MAX_VALUE))
          .hasSizeLessThanOrEqualTo(253)
          .endsWith("-" + hash + ".bloom-v" + SnapshotVersions.MAX + "-d" + Integer.MAX_VALUE)
          .matches(DNS_SUBDOMAIN);
      assertThat(label).hasSizeLessThanOrEqualTo(63).endsWith("_" + hash).matches(LABEL_VALUE);
      assertThat(filter).startsWith(manifest.substring(0, 40));
    }
    assertThat(SnapshotNames.manifestName(a)).isNotEqualTo(SnapshotNames.manifestName(b));
    assertThat(SnapshotNames.chunkName(a, 1, 0)).isNotEqualTo(SnapshotNames.chunkName(b, 1, 0));
    assertThat(SnapshotNames.filterLabelValue(a)).isNotEqualTo(SnapshotNames.filterLabelValue(b));
    assertThat(SnapshotNames.filterLabelValue("c".repeat(64))).hasSize(63);
  }

  @Test
  void noFilterIsNamedLikeAnotherFiltersCutNames() {
    String victim = "payments-" + "x".repeat(250);
    String cutLabel = SnapshotNames.filterLabelValue(victim);
    String cutManifest = SnapshotNames.manifestName(victim);
    String cutChunk = SnapshotNames.chunkName(victim, 1, 0);
    // An attacker may name a filter after any cut value that is itself a valid name.
    for (String attacker :
        new String[] {
          cutLabel,
          cutLabel.replace('_', '-'),
          cutManifest.substring(0, cutManifest.length() - "-bloom".length()),
          cutManifest.replace(".bloom", ""),
          cutChunk.replace(".bloom-v1-0", ""),
          victim.substring(0, 247),
          victim.substring(0, 63)
        }) {
      if (!DNS_SUBDOMAIN.matcher(attacker).matches() || attacker.length() > 253) {
        continue;
      }
      assertThat(SnapshotNames.filterLabelValue(attacker)).isNotEqualTo(cutLabel);
      assertThat(SnapshotNames.manifestName(attacker)).isNotEqualTo(cutManifest);
      assertThat(SnapshotNames.chunkName(attacker, 1, 0)).isNotEqualTo(cutChunk);
    }
    assertThat(cutLabel).as("a filter name never holds '_'").doesNotMatch(DNS_SUBDOMAIN);
    assertThat(SnapshotNames.manifestName(cutLabel.replace('_', '-')))
        .as("names that fit are never cut")
        .isEqualTo(cutLabel.replace('_', '-') + "-bloom");
  }

  @Test
  void namesThatFitAreUnchanged() {
    String longest = "n".repeat(63);
    assertThat(SnapshotNames.filterLabelValue(longest)).isEqualTo(longest);
    assertThat(SnapshotNames.filterSelector(longest))
        .isEqualTo(
            "app.kubernetes.io/managed-by=bloom-operator,bloomoperator.io/filter=" + longest);
    String name = "m".repeat(247);
    assertThat(SnapshotNames.manifestName(name)).isEqualTo(name + "-bloom");
  }

  @Test
  void rejectsEmptyNamesAndNegativeNumbers() {
    assertThatThrownBy(() -> SnapshotNames.manifestName(""))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> SnapshotNames.chunkName("x", -1, 0))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> SnapshotNames.chunkName("x", 0, -1))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void namesExistOnlyForVersionsInTheOneRange() {
    long max = SnapshotVersions.MAX;
    assertThat(SnapshotNames.chunkName("x", max, 0)).isEqualTo("x-bloom-v" + max + "-0");
    assertThat(SnapshotNames.deltaChunkName("x", max, 3)).isEqualTo("x-bloom-v" + max + "-d3");
    for (long refused : new long[] {0, max + 1, 2_000_000_000_000_000_000L, Long.MAX_VALUE}) {
      assertThatThrownBy(() -> SnapshotNames.chunkName("x", refused, 0))
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> SnapshotNames.deltaChunkName("x", refused, 0))
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  private static java.util.Map.Entry<String, String> entry(String k, String v) {
    return java.util.Map.entry(k, v);
  }
}
