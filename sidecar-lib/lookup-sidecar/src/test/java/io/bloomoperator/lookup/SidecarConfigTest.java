package io.bloomoperator.lookup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.watch.BeforeFirstSnapshot;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class SidecarConfigTest {

  @Test
  void filterSpecsNameNamespaceKeyTypeAndFailMode() {
    assertThat(FilterSpec.parse("ids"))
        .isEqualTo(new FilterSpec(Optional.empty(), "ids", KeyType.STRING, Optional.empty()));
    assertThat(FilterSpec.parse("shop/ids:Long:fail-closed"))
        .isEqualTo(
            new FilterSpec(
                Optional.of("shop"),
                "ids",
                KeyType.LONG,
                Optional.of(BeforeFirstSnapshot.FAIL_CLOSED)));
    assertThat(FilterSpec.parse("ids:FAIL-OPEN:string").failMode())
        .hasValue(BeforeFirstSnapshot.FAIL_OPEN);
    for (String bad : List.of("", "/ids", "shop/", "a/b/c", "ids:Int", "ids:Long:String")) {
      assertThatThrownBy(() -> FilterSpec.parse(bad)).isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  void flagsWinOverTheEnvironmentAndDefaultsAreSafe() {
    SidecarConfig defaults = SidecarConfig.parse(new String[] {"--filter", "ids"}, Map.of());
    assertThat(defaults.bindAddress()).isEqualTo("127.0.0.1");
    assertThat(defaults.port()).isEqualTo(SidecarConfig.DEFAULT_PORT);
    assertThat(defaults.failMode()).isEqualTo(BeforeFirstSnapshot.FAIL_OPEN);
    assertThat(defaults.readerReports()).isTrue();
    assertThat(defaults.requestTimeout()).isEqualTo(Duration.ofSeconds(10));

    Map<String, String> env =
        Map.of(
            "BLOOM_LOOKUP_FILTERS", "shop/a:Long, b",
            "BLOOM_LOOKUP_PORT", "9000",
            "BLOOM_LOOKUP_FAIL_MODE", "fail-closed",
            "BLOOM_LOOKUP_TRUSTED_KEY_FILES", "/keys/one.pem,/keys/two.pem",
            "BLOOM_LOOKUP_MAX_SNAPSHOT_BYTES", "64MiB",
            "BLOOM_LOOKUP_RESYNC", "30s",
            "BLOOM_LOOKUP_MAX_MANIFEST_AGE", "PT2H");
    SidecarConfig fromEnv = SidecarConfig.parse(new String[0], env);
    assertThat(fromEnv.filters()).extracting(FilterSpec::name).containsExactly("a", "b");
    assertThat(fromEnv.port()).isEqualTo(9000);
    assertThat(fromEnv.failMode()).isEqualTo(BeforeFirstSnapshot.FAIL_CLOSED);
    assertThat(fromEnv.trustedKeyFiles())
        .containsExactly(Path.of("/keys/one.pem"), Path.of("/keys/two.pem"));
    assertThat(fromEnv.maxSnapshotBytes()).hasValue(64L << 20);
    assertThat(fromEnv.resync()).hasValue(Duration.ofSeconds(30));
    assertThat(fromEnv.maxManifestAge()).hasValue(Duration.ofHours(2));

    SidecarConfig flags =
        SidecarConfig.parse(
            new String[] {
              "--filter=c", "--filter", "d:Long", "--port", "0", "--reader-reports=false"
            },
            env);
    assertThat(flags.filters()).extracting(FilterSpec::name).containsExactly("c", "d");
    assertThat(flags.port()).isZero();
    assertThat(flags.readerReports()).isFalse();
  }

  @Test
  void refusesWhatCannotWork() {
    for (String[] args :
        List.of(
            new String[0],
            new String[] {"--filter", "a", "--filter", "other/a"}, // one path for two filters
            new String[] {"--filter", "a", "--port", "70000"},
            new String[] {"--filter", "a", "--port"},
            new String[] {"--filter", "a", "--threads", "0"},
            new String[] {"--filter", "a", "--unknown", "1"},
            new String[] {"--filter", "a", "positional"},
            new String[] {"--filter", "a", "--port", "1", "--port", "2"},
            new String[] {"--filter", "a", "--max-manifest-age", "1h"}, // needs a trusted key
            new String[] {"--filter", "a", "--memory-mapped"}, // needs a cache directory
            new String[] {"--filter", "a", "--max-snapshot-bytes", "12 furlongs"},
            new String[] {"--filter", "a", "--resync", "soon"},
            new String[] {"--filter", "a", "--allow-non-loopback=maybe"})) {
      assertThatThrownBy(() -> SidecarConfig.parse(args, Map.of()))
          .as(String.join(" ", args))
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  void everyValueIsBoundedBeforeItIsUsed() {
    String[][] refused = {
      {"--filter", "a", "--request-timeout", "0s"},
      {"--filter", "a", "--request-timeout", "11m"},
      {"--filter", "a", "--file-interval", "2h"},
      {"--filter", "a", "--resync", "2d"},
      {"--filter", "a", "--local-adds-ttl", "0s"},
      {"--filter", "a", "--local-adds-max-entries", "10000001"},
      {"--filter", "a", "--local-adds-max-key-length", "65537"},
      {"--filter", "a", "--max-chunks", "1048577"},
      {"--filter", "a", "--namespace", "n".repeat(SidecarConfig.MAX_VALUE_CHARS + 1)},
    };
    for (String[] args : refused) {
      assertThatThrownBy(() -> SidecarConfig.parse(args, Map.of()))
          .as(String.join(" ", args).substring(0, Math.min(80, String.join(" ", args).length())))
          .isInstanceOf(IllegalArgumentException.class);
    }
    String[] many = new String[SidecarConfig.MAX_ARGS + 1];
    java.util.Arrays.fill(many, "--reader-reports");
    assertThatThrownBy(() -> SidecarConfig.parse(many, Map.of()))
        .hasMessageContaining("more than " + SidecarConfig.MAX_ARGS + " arguments");
    String filters =
        String.join(
            ",",
            java.util.stream.IntStream.rangeClosed(0, SidecarConfig.MAX_FILTERS)
                .mapToObj(i -> "f" + i)
                .toList());
    assertThatThrownBy(
            () -> SidecarConfig.parse(new String[0], Map.of("BLOOM_LOOKUP_FILTERS", filters)))
        .hasMessageContaining("more than " + SidecarConfig.MAX_FILTERS);
    // The bounds themselves are accepted.
    SidecarConfig edge =
        SidecarConfig.parse(
            new String[] {
              "--filter",
              "a",
              "--request-timeout",
              "10m",
              "--file-interval",
              "1h",
              "--resync",
              "0s",
              "--local-adds-max-key-length",
              "65536"
            },
            Map.of());
    assertThat(edge.requestTimeout()).isEqualTo(Duration.ofMinutes(10));
  }
}
