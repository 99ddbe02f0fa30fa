package io.bloomoperator.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.source.EgressPolicy.Refusal;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The address rules of http sources, and the settings that carry them. */
class EgressPolicyTest {

  private static Optional<Refusal> check(EgressPolicy policy, String host, String address)
      throws UnknownHostException {
    return policy.check(host, InetAddress.getByName(address));
  }

  private static Optional<Refusal> byDefault(String address) throws UnknownHostException {
    return check(EgressPolicy.defaults(), "example.com", address);
  }

  @Test
  void defaultsRefuseTheOperatorsSurroundings() throws Exception {
    assertThat(byDefault("127.0.0.1")).contains(Refusal.LOOPBACK);
    assertThat(byDefault("127.255.0.9")).contains(Refusal.LOOPBACK);
    assertThat(byDefault("::1")).contains(Refusal.LOOPBACK);
    assertThat(byDefault("0.0.0.0")).contains(Refusal.UNSPECIFIED);
    assertThat(byDefault("::")).contains(Refusal.UNSPECIFIED);
    assertThat(byDefault("169.254.169.254")).contains(Refusal.LINK_LOCAL);
    assertThat(byDefault("fe80::1")).contains(Refusal.LINK_LOCAL);
    assertThat(byDefault("febf::1")).contains(Refusal.LINK_LOCAL);
    assertThat(byDefault("fd00:ec2::254")).contains(Refusal.METADATA);
    assertThat(byDefault("100.100.100.200")).contains(Refusal.METADATA);
    assertThat(byDefault("224.0.0.1")).contains(Refusal.MULTICAST);
    assertThat(byDefault("255.255.255.255")).contains(Refusal.MULTICAST);
    assertThat(byDefault("ff02::1")).contains(Refusal.MULTICAST);
  }

  @Test
  void ipv6FormsCarryingAnIpv4AddressAreJudgedByIt() throws Exception {
    assertThat(byDefault("::ffff:127.0.0.1")).contains(Refusal.LOOPBACK);
    assertThat(byDefault("::ffff:169.254.169.254")).contains(Refusal.LINK_LOCAL);
    assertThat(byDefault("::127.0.0.1")).contains(Refusal.LOOPBACK);
    assertThat(byDefault("::a9fe:a9fe")).contains(Refusal.LINK_LOCAL);
    assertThat(byDefault("64:ff9b::169.254.169.254")).contains(Refusal.LINK_LOCAL);
    assertThat(byDefault("64:ff9b::8.8.8.8")).isEmpty();
    EgressPolicy denyTen = EgressPolicy.of(null, "10.0.0.0/8");
    assertThat(check(denyTen, "x", "::ffff:10.1.2.3")).contains(Refusal.DENIED);
    assertThat(check(denyTen, "x", "64:ff9b::10.1.2.3")).contains(Refusal.DENIED);
  }

  /**
   * NAT64 local-use, 6to4 and Teredo addresses reach their IPv4 address through a translator or
   * relay: judged by it, like the forms above.
   */
  @Test
  void translatedAndTunnelledIpv6FormsAreJudgedByTheirIpv4Address() throws Exception {
    // NAT64 local-use prefix 64:ff9b:1::/48 (RFC 8215), IPv4 in the last four bytes.
    assertThat(byDefault("64:ff9b:1::127.0.0.1")).contains(Refusal.LOOPBACK);
    assertThat(byDefault("64:ff9b:1::a9fe:a9fe")).contains(Refusal.LINK_LOCAL);
    assertThat(byDefault("64:ff9b:1:ffff::169.254.169.254")).contains(Refusal.LINK_LOCAL);
    assertThat(byDefault("64:ff9b:1::8.8.8.8")).isEmpty();
    // 6to4 2002:AABB:CCDD::/48: the IPv4 address follows the prefix.
    assertThat(byDefault("2002:7f00:1::1")).contains(Refusal.LOOPBACK);
    assertThat(byDefault("2002:a9fe:a9fe::")).contains(Refusal.LINK_LOCAL);
    assertThat(byDefault("2002:a9fe:a9fe:1:2:3:4:5")).contains(Refusal.LINK_LOCAL);
    assertThat(byDefault("2002:0808:0808::1")).isEmpty();
    // Teredo 2001:0::/32: the client's IPv4 address is the last four bytes inverted
    // (127.0.0.1 = 7f.00.00.01 -> 80ff:fffe; 169.254.169.254 -> 5601:5601).
    assertThat(byDefault("2001:0:4136:e378:8000:63bf:80ff:fffe")).contains(Refusal.LOOPBACK);
    assertThat(byDefault("2001::5601:5601")).contains(Refusal.LINK_LOCAL);
    assertThat(byDefault("2001:0:4136:e378:8000:63bf:f7f7:f7f7")).isEmpty(); // 8.8.8.8
    // Not Teredo: 2001:db8::/32 is another /32 of 2001::/16.
    assertThat(byDefault("2001:db8::5601:5601")).isEmpty();
    EgressPolicy denyTen = EgressPolicy.of(null, "10.0.0.0/8");
    assertThat(check(denyTen, "x", "2002:0a01:0203::1")).contains(Refusal.DENIED);
    assertThat(check(denyTen, "x", "2001::f5fe:fdfc")).contains(Refusal.DENIED); // 10.1.2.3
    assertThat(check(denyTen, "x", "64:ff9b:1::10.1.2.3")).contains(Refusal.DENIED);
    assertThat(check(EgressPolicy.of("169.254.10.0/24", null), "x", "2002:a9fe:0a01::"))
        .as("allowed by its IPv4 address")
        .isEmpty();
  }

  @Test
  void ordinaryAddressesArePassed() throws Exception {
    assertThat(byDefault("10.96.0.10")).isEmpty();
    assertThat(byDefault("192.168.1.20")).isEmpty();
    assertThat(byDefault("93.184.216.34")).isEmpty();
    assertThat(byDefault("2606:4700::1111")).isEmpty();
    assertThat(byDefault("fd12::1")).isEmpty();
  }

  @Test
  void operatorsOwnInterfacesAreRefused() throws Exception {
    InetAddress own =
        java.util.Collections.list(java.net.NetworkInterface.getNetworkInterfaces()).stream()
            .flatMap(i -> java.util.Collections.list(i.getInetAddresses()).stream())
            .filter(a -> !a.isLoopbackAddress() && !a.isLinkLocalAddress())
            .findFirst()
            .orElse(null);
    org.junit.jupiter.api.Assumptions.assumeTrue(own != null, "no non-loopback interface");
    assertThat(EgressPolicy.defaults().check("pod", own)).contains(Refusal.OPERATOR);
    String cidr = own.getHostAddress().replaceAll("%.*", "") + "/" + (own.getAddress().length * 8);
    assertThat(EgressPolicy.of(cidr, null).check("pod", own)).isEmpty();
  }

  @Test
  void allowAdmitsDefaultDeniedAddressesAndDenyBeatsAllow() throws Exception {
    EgressPolicy policy =
        EgressPolicy.of(
            "127.0.0.0/8, 169.254.10.0/24 exports.local",
            "127.0.0.9 .svc.cluster.local 10.96.0.0/12");
    assertThat(check(policy, "x", "127.0.0.1")).isEmpty();
    assertThat(check(policy, "x", "127.0.0.9")).contains(Refusal.DENIED);
    assertThat(check(policy, "x", "169.254.10.7")).isEmpty();
    assertThat(check(policy, "x", "169.254.169.254")).contains(Refusal.LINK_LOCAL);
    assertThat(check(policy, "exports.local", "169.254.169.254")).isEmpty();
    assertThat(check(policy, "EXPORTS.local.", "169.254.169.254")).isEmpty();
    assertThat(check(policy, "x", "10.100.0.1")).contains(Refusal.DENIED);
    assertThat(check(policy, "export.ns.svc.cluster.local", "10.0.0.1")).contains(Refusal.DENIED);
    assertThat(check(policy, "svc.cluster.local", "10.0.0.1")).contains(Refusal.DENIED);
    assertThat(check(policy, "notsvc.cluster.local", "10.0.0.1")).isEmpty();
    assertThat(check(policy, "exports.local", "10.96.0.1")).contains(Refusal.DENIED);
  }

  @Test
  void literalsAreCheckedWithoutDns() {
    EgressPolicy policy = EgressPolicy.defaults();
    assertThat(policy.checkLiteral("exports.example.com")).isEmpty();
    assertThat(policy.checkLiteral("8.8.8.8")).isEmpty();
    assertThat(policy.checkLiteral("127.0.0.1")).contains(Refusal.LOOPBACK);
    assertThat(policy.checkLiteral("[::1]")).contains(Refusal.LOOPBACK);
    assertThat(policy.checkLiteral("::ffff:7f00:1")).contains(Refusal.LOOPBACK);
    assertThat(policy.checkLiteral("127.1")).contains(Refusal.NOT_AN_ADDRESS);
    assertThat(policy.checkLiteral("2130706433")).contains(Refusal.NOT_AN_ADDRESS);
    assertThat(policy.checkLiteral("1.2.3.4.5")).contains(Refusal.NOT_AN_ADDRESS);
    assertThat(policy.checkLiteral("010.0.0.1")).contains(Refusal.NOT_AN_ADDRESS);
  }

  @Test
  void invalidEntriesStopTheOperator() {
    assertThatThrownBy(() -> EgressPolicy.of("10.0.0.0/33", null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("BLOOM_HTTP_ALLOW");
    assertThatThrownBy(() -> EgressPolicy.of(null, "not a/host"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("BLOOM_HTTP_DENY");
    assertThatThrownBy(() -> EgressPolicy.of("300.1.1.1", null))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(EgressPolicy.of(" , ", "")).isEqualTo(EgressPolicy.defaults());
    assertThat(EgressPolicy.of("[::1]/128", null)).isEqualTo(EgressPolicy.of("::1", null));
  }

  @Test
  void settingsComeFromTheEnvironment() {
    assertThat(HttpSourceSettings.fromEnvironment(Map.of()))
        .isEqualTo(HttpSourceSettings.defaults());
    HttpSourceSettings defaults = HttpSourceSettings.defaults();
    assertThat(defaults.maxLineBytes()).isEqualTo(65536);
    assertThat(defaults.maxBodyBytes()).isEqualTo(8L << 30);
    assertThat(defaults.maxReadTime()).isEqualTo(Duration.ofMinutes(10));
    HttpSourceSettings set =
        HttpSourceSettings.fromEnvironment(
            Map.of(
                "BLOOM_HTTP_ALLOW", "169.254.10.0/24",
                "BLOOM_HTTP_DENY", "10.96.0.0/12",
                "BLOOM_HTTP_MAX_LINE_BYTES", "1024",
                "BLOOM_HTTP_MAX_BODY_BYTES", "1000000",
                "BLOOM_HTTP_MAX_READ_TIME", "30m"));
    assertThat(set)
        .isEqualTo(
            new HttpSourceSettings(
                EgressPolicy.of("169.254.10.0/24", "10.96.0.0/12"),
                1024,
                1_000_000,
                Duration.ofMinutes(30)));
    assertThatThrownBy(
            () -> HttpSourceSettings.fromEnvironment(Map.of("BLOOM_HTTP_MAX_LINE_BYTES", "0")))
        .hasMessageContaining("BLOOM_HTTP_MAX_LINE_BYTES");
    assertThatThrownBy(
            () -> HttpSourceSettings.fromEnvironment(Map.of("BLOOM_HTTP_MAX_READ_TIME", "forever")))
        .hasMessageContaining("BLOOM_HTTP_MAX_READ_TIME");
    assertThat(
            io.bloomoperator.settings.OperatorSettings.fromEnvironment(
                    Map.of("BLOOM_HTTP_MAX_BODY_BYTES", "5"))
                .sources()
                .http()
                .maxBodyBytes())
        .isEqualTo(5);
    assertThat(io.bloomoperator.settings.OperatorSettings.defaults().sources().http())
        .isEqualTo(HttpSourceSettings.defaults());
  }
}
