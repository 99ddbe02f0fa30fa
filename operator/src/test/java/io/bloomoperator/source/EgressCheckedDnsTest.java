package io.bloomoperator.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import org.junit.jupiter.api.Test;

/**
 * The resolver of the operator's HTTP clients (sources and stores) judges every answer: what the
 * HTTP client may connect to is exactly what it returns, so an answer with a refused address must
 * never come back, whole or in part.
 */
class EgressCheckedDnsTest {

  private static InetAddress ip(String literal) throws UnknownHostException {
    return InetAddress.getByName(literal);
  }

  @Test
  void anAllowedAnswerIsReturnedAsResolved() throws Exception {
    EgressCheckedDns dns =
        EgressCheckedDns.forStores(
            EgressPolicy.of("127.0.0.1/32", null), host -> new InetAddress[] {ip("127.0.0.1")});
    assertThat(dns.resolve("store.example")).containsExactly(ip("127.0.0.1"));
    assertThat(dns.resolve("store.example", 9000))
        .containsExactly(new InetSocketAddress(ip("127.0.0.1"), 9000));
  }

  @Test
  void anAnswerWithOneRefusedAddressIsRefusedWhole() {
    EgressCheckedDns dns =
        EgressCheckedDns.forStores(
            EgressPolicy.of("127.0.0.1/32", null),
            host -> new InetAddress[] {ip("127.0.0.1"), ip("169.254.169.254")});
    assertThatThrownBy(() -> dns.resolve("store.example"))
        .isInstanceOf(EgressCheckedDns.Refused.class)
        .hasMessage("the store's endpoint resolved to an address the egress policy refuses")
        .satisfies(
            e ->
                assertThat(((EgressCheckedDns.Refused) e).refusal())
                    .isEqualTo(EgressPolicy.Refusal.LINK_LOCAL));
    assertThatThrownBy(() -> dns.resolve("store.example", 443))
        .isInstanceOf(EgressCheckedDns.Refused.class);
  }

  @Test
  void aRefusedLiteralIsNotEvenLookedUp() {
    EgressCheckedDns dns =
        EgressCheckedDns.forStores(
            EgressPolicy.defaults(),
            host -> {
              throw new AssertionError("looked up " + host);
            });
    assertThatThrownBy(() -> dns.resolve("169.254.169.254"))
        .isInstanceOf(EgressCheckedDns.Refused.class);
  }

  @Test
  void anEmptyAnswerIsNoAddressNotAnUnresolvedName() {
    // The HTTP client lets the socket resolve a name it got no address for: never allowed here.
    EgressCheckedDns dns =
        EgressCheckedDns.forStores(EgressPolicy.defaults(), host -> new InetAddress[0]);
    assertThatThrownBy(() -> dns.resolve("store.example", 443))
        .isInstanceOf(UnknownHostException.class);
  }

  @Test
  void aLiteralIsJudgedAndNeverLookedUp() throws Exception {
    // The HTTP client hands IP literals to its resolver like names: the literal is the answer.
    EgressCheckedDns dns =
        EgressCheckedDns.forSources(
            EgressPolicy.of("127.0.0.1/32", null),
            host -> {
              throw new AssertionError("looked up " + host);
            });
    assertThat(dns.resolve("127.0.0.1")).containsExactly(ip("127.0.0.1"));
    assertThatThrownBy(() -> dns.resolve("127.1"))
        .isInstanceOf(EgressCheckedDns.Refused.class)
        .hasMessage("the source's host resolved to an address the egress policy refuses")
        .satisfies(
            e ->
                assertThat(((EgressCheckedDns.Refused) e).refusal())
                    .isEqualTo(EgressPolicy.Refusal.NOT_AN_ADDRESS));
    assertThatThrownBy(() -> dns.resolve("[::1]"))
        .isInstanceOf(EgressCheckedDns.Refused.class)
        .satisfies(
            e ->
                assertThat(((EgressCheckedDns.Refused) e).refusal())
                    .isEqualTo(EgressPolicy.Refusal.LOOPBACK));
  }
}
