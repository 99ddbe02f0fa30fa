package io.bloomoperator.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.snapshot.Ed25519Keys;
import io.bloomoperator.watch.LiveBloomFilter;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Hostile or wrong {@code bloom.filters.*} settings stop the application at startup with a message
 * naming the property, before any watch starts, and never quote a key file's content. The client
 * points at a closed port: nothing here may reach an API server.
 */
class BloomFilterPropertiesAttackTest {

  private static final String P = "bloom.filters.ids.";
  private static KubernetesClient unreachable;

  @TempDir static Path dir;

  @BeforeAll
  static void client() {
    unreachable =
        new KubernetesClientBuilder()
            .withConfig(new ConfigBuilder().withMasterUrl("https://127.0.0.1:1").build())
            .build();
  }

  @AfterAll
  static void close() {
    unreachable.close();
  }

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(BloomFilterAutoConfiguration.class))
          .withBean(KubernetesClient.class, () -> unreachable);

  static Stream<Arguments> badSettings() {
    return Stream.of(
        Arguments.of(new String[] {P + "namespace=shop"}, P + "name is required"),
        Arguments.of(new String[] {P + "name=../../secrets"}, P + "name must be a Kubernetes"),
        Arguments.of(new String[] {P + "name=Product_IDs"}, P + "name must be a Kubernetes"),
        Arguments.of(new String[] {P + "name=a\nb"}, P + "name must be a Kubernetes"),
        Arguments.of(new String[] {P + "name=" + "a".repeat(254)}, P + "name must be a Kubernetes"),
        Arguments.of(
            new String[] {P + "name=ids", P + "namespace=kube system"},
            P + "namespace must be a Kubernetes"),
        Arguments.of(
            new String[] {P + "name=ids", P + "namespace=" + "n".repeat(64)},
            P + "namespace must be a Kubernetes"),
        Arguments.of(new String[] {P + "name=ids", P + "key-type=Integer"}, P + "key-type"),
        Arguments.of(new String[] {P + "name=ids", P + "fail-mode=sometimes"}, P + "fail-mode"),
        Arguments.of(
            new String[] {P + "name=ids", P + "max-snapshot-bytes=0"}, P + "max-snapshot-bytes"),
        Arguments.of(new String[] {P + "name=ids", P + "max-chunks=-1"}, P + "max-chunks"),
        Arguments.of(
            new String[] {P + "name=ids", P + "memory-mapped=true"},
            P + "memory-mapped needs local-cache-dir"),
        Arguments.of(new String[] {P + "name=ids", P + "resync=-1s"}, P + "resync"),
        Arguments.of(
            new String[] {P + "name=ids", P + "in-place-check-interval=-1s"},
            P + "in-place-check-interval must be in 0s..60m"),
        Arguments.of(
            new String[] {P + "name=ids", P + "in-place-check-interval=61m"},
            P + "in-place-check-interval must be in 0s..60m"),
        Arguments.of(
            new String[] {P + "name=ids", P + "local-adds-max-entries=-1"},
            P + "local-adds-max-entries must not be negative"),
        Arguments.of(
            new String[] {P + "name=ids", P + "local-adds-ttl=0s"},
            P + "local-adds-ttl must be positive"),
        Arguments.of(
            new String[] {P + "name=ids", P + "local-adds-max-key-length=0"},
            P + "local-adds-max-key-length must be positive"),
        Arguments.of(
            new String[] {P + "name=ids", P + "key-type=Long", P + "fixed-keys=1,SECRET-TWO"},
            P + "fixed-keys must be 64-bit integers"),
        Arguments.of(
            new String[] {"bloom.filters[bad/bean].name=ids"},
            "bloom.filters.<bean>: a bean name"));
  }

  @ParameterizedTest
  @MethodSource("badSettings")
  void badSettingFailsTheContextNamingTheProperty(String[] properties, String expected) {
    runner
        .withPropertyValues(properties)
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(messages(context.getStartupFailure()))
                  .contains(expected)
                  .doesNotContain("SECRET");
            });
  }

  /** The local-add bounds that pass the checks above reach the filter (no API server needed). */
  @Test
  void localAddBoundsFromPropertiesReachTheFilter() {
    runner
        .withPropertyValues(
            P + "name=ids",
            P + "namespace=shop",
            P + "fail-mode=fail-closed",
            P + "local-adds-max-entries=2",
            P + "local-adds-max-key-length=4")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              @SuppressWarnings("unchecked")
              LiveBloomFilter<String> ids = context.getBean("ids", LiveBloomFilter.class);
              assertThat(ids.addLocal("abcd")).isTrue();
              assertThat(ids.mightContain("abcd")).isTrue(); // nothing loaded: the overlay says so
              assertThatThrownBy(() -> ids.addLocal("abcde"))
                  .isInstanceOf(IllegalArgumentException.class);
              assertThat(ids.addLocal("x")).isTrue();
              assertThat(ids.addLocal("y")).isFalse();
              assertThat(ids.localAddsRefused()).isEqualTo(1);
            });
  }

  @Test
  void trustedKeyThatIsNotAKeyIsRefusedWithoutQuotingIt() throws Exception {
    Path garbage = dir.resolve("garbage.pem");
    Files.writeString(
        garbage, "-----BEGIN PUBLIC KEY-----\nTOP-SECRET-NOT-A-KEY\n-----END PUBLIC KEY-----\n");
    runner
        .withPropertyValues(
            P + "name=ids", P + "namespace=shop", P + "trusted-keys=file:" + garbage)
        .run(
            context -> {
              assertThat(context).hasFailed();
              String messages = messages(context.getStartupFailure());
              assertThat(messages)
                  .contains(P + "trusted-keys")
                  .contains("not an Ed25519 public key")
                  .doesNotContain("TOP-SECRET");
            });
  }

  @Test
  void hugeTrustedKeyFileIsNotReadWhole() throws Exception {
    Path huge = dir.resolve("huge.pem");
    Files.write(huge, new byte[64 * 1024 * 1024]); // 64 MiB of zeros
    runner
        .withPropertyValues(P + "name=ids", P + "namespace=shop", P + "trusted-keys=file:" + huge)
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(messages(context.getStartupFailure()))
                  .contains(P + "trusted-keys")
                  .contains("larger than " + LiveBloomFilterFactory.MAX_KEY_BYTES + " bytes");
            });
  }

  @Test
  void aRealTrustedKeyIsAccepted() throws Exception {
    Path key = dir.resolve("operator.pub");
    Files.writeString(
        key, Ed25519Keys.toPem(Ed25519Keys.generate().getPublic()), StandardCharsets.US_ASCII);
    runner
        .withPropertyValues(
            P + "name=ids",
            P + "namespace=shop",
            P + "key-type=long",
            P + "fail-mode=FAIL_CLOSED",
            P + "trusted-keys=file:" + key)
        .run(context -> assertThat(context).hasNotFailed().hasBean("ids"));
  }

  /** Every message of the failure's cause chain, one per line. */
  private static String messages(Throwable failure) {
    StringBuilder all = new StringBuilder();
    for (Throwable t = failure; t != null; t = t.getCause()) {
      all.append(t.getMessage()).append('\n');
    }
    return all.toString();
  }
}
