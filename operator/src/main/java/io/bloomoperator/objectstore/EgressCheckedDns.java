package io.bloomoperator.objectstore;

import io.bloomoperator.source.EgressPolicy;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.hc.client5.http.DnsResolver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The name resolution of a store's HTTP client: every answer, for every new connection, is judged
 * by the operator's egress policy, and the client connects only to the addresses returned here. A
 * store's host name that resolved to an allowed address when its BloomStore was checked and
 * resolves later to the metadata endpoint or the node's loopback (DNS rebinding, or a record
 * changed) is refused on the connection that would have gone there. A host with one refused address
 * is refused whole, as for HTTP sources.
 */
final class EgressCheckedDns implements DnsResolver {

  private static final Logger LOG = LoggerFactory.getLogger(EgressCheckedDns.class);

  /** A host refused by the egress policy; the text is fixed and names neither host nor address. */
  static final class Refused extends UnknownHostException {
    private static final long serialVersionUID = 1L;

    private final transient EgressPolicy.Refusal refusal;

    Refused(EgressPolicy.Refusal refusal) {
      super("the store's endpoint resolved to an address the egress policy refuses");
      this.refusal = refusal;
    }

    EgressPolicy.Refusal refusal() {
      return refusal;
    }
  }

  private final EgressPolicy policy;
  private final StoreResolver resolver;

  EgressCheckedDns(EgressPolicy policy, StoreResolver resolver) {
    this.policy = policy;
    this.resolver = resolver;
  }

  @Override
  public InetAddress[] resolve(String host) throws UnknownHostException {
    Optional<EgressPolicy.Refusal> literal = policy.checkLiteral(host);
    if (literal.isPresent()) {
      throw refused(host, null, literal.get());
    }
    InetAddress[] addresses = resolver.resolve(host);
    if (addresses == null || addresses.length == 0) {
      // Never "unresolved": the HTTP client would then let the socket resolve the name itself.
      throw new UnknownHostException("no address");
    }
    for (InetAddress address : addresses) {
      Optional<EgressPolicy.Refusal> refusal = policy.check(host, address);
      if (refusal.isPresent()) {
        throw refused(host, address, refusal.get());
      }
    }
    return addresses.clone();
  }

  @Override
  public List<InetSocketAddress> resolve(String host, int port) throws UnknownHostException {
    List<InetSocketAddress> addresses = new ArrayList<>();
    for (InetAddress address : resolve(host)) {
      addresses.add(new InetSocketAddress(address, port));
    }
    return addresses;
  }

  /** Not looked up: the name is only ever connected to, and a reverse lookup is one more query. */
  @Override
  public String resolveCanonicalHostname(String host) {
    return host;
  }

  private static Refused refused(String host, InetAddress address, EgressPolicy.Refusal refusal) {
    // The administrator's log: the host and address; statuses get the fixed text only.
    LOG.warn(
        "object store host {} ({}) {}; not connecting (BLOOM_HTTP_ALLOW)",
        host,
        address == null ? "literal" : address.getHostAddress(),
        refusal.text());
    return new Refused(refusal);
  }
}
