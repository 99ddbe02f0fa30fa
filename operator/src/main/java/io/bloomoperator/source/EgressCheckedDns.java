package io.bloomoperator.source;

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
 * The name resolution of the operator's own HTTP clients (Apache HttpClient 5: http sources and
 * object stores): every answer, for every new connection, is judged by an {@link EgressPolicy}, and
 * the client connects only to the addresses returned here. A host with one refused address is
 * refused whole, so answers mixing a public and an internal address do not help; a name that
 * resolved to an allowed address once and later to the metadata endpoint or the node's loopback
 * (DNS rebinding, or a record changed) is refused on the connection that would have gone there.
 *
 * <p>IP literals are judged here too (the client hands them to its resolver like names) and are
 * never looked up: {@code 127.1} and other digits-and-dots that are no dotted quad are refused
 * rather than left to a resolver that may read them as an address.
 */
public final class EgressCheckedDns implements DnsResolver {

  private static final Logger LOG = LoggerFactory.getLogger(EgressCheckedDns.class);

  /** Resolves a host name to every address it has: the JVM's resolver except in tests. */
  @FunctionalInterface
  public interface Lookup {

    /** The JVM's resolver. */
    Lookup SYSTEM = InetAddress::getAllByName;

    /**
     * Every address of {@code host}.
     *
     * @throws UnknownHostException if it has none
     */
    InetAddress[] resolve(String host) throws UnknownHostException;
  }

  /**
   * A host or connection refused by the egress policy; the text is fixed and names neither host nor
   * address.
   */
  public static final class Refused extends UnknownHostException {
    private static final long serialVersionUID = 1L;

    private final transient EgressPolicy.Refusal refusal;

    Refused(String message, EgressPolicy.Refusal refusal) {
      super(message);
      this.refusal = refusal;
    }

    /** Why the policy refused the host (or one of its addresses). */
    public EgressPolicy.Refusal refusal() {
      return refusal;
    }
  }

  private final EgressPolicy policy;
  private final Lookup lookup;
  private final String subject;
  private final String settings;
  private final boolean warn;

  private EgressCheckedDns(
      EgressPolicy policy, Lookup lookup, String subject, String settings, boolean warn) {
    this.policy = policy;
    this.lookup = lookup;
    this.subject = subject;
    this.settings = settings;
    this.warn = warn;
  }

  /**
   * For the clients of object stores. A refusal is logged at WARN with the host and the address: a
   * store's endpoint is the administrator's, and so is the log.
   */
  public static EgressCheckedDns forStores(EgressPolicy policy, Lookup lookup) {
    return new EgressCheckedDns(
        policy, lookup, "the store's endpoint", "BLOOM_STORE_ALLOW, else BLOOM_HTTP_ALLOW", true);
  }

  /**
   * For the clients of http sources. A refusal is logged at DEBUG only: the URL is a tenant's,
   * whose refusals the BloomFilter's status reports, and a tenant must not be able to fill the
   * operator's log.
   */
  public static EgressCheckedDns forSources(EgressPolicy policy, Lookup lookup) {
    return new EgressCheckedDns(policy, lookup, "the source's host", "BLOOM_HTTP_ALLOW", false);
  }

  @Override
  public InetAddress[] resolve(String host) throws UnknownHostException {
    Optional<EgressPolicy.Refusal> literalRefusal = policy.checkLiteral(host);
    if (literalRefusal.isPresent()) {
      throw refused(host, null, literalRefusal.get());
    }
    Optional<InetAddress> literal = EgressPolicy.literal(host);
    if (literal.isPresent()) {
      return new InetAddress[] {literal.get()};
    }
    InetAddress[] addresses = lookup.resolve(host);
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

  private Refused refused(String host, InetAddress address, EgressPolicy.Refusal refusal) {
    // The log may name the host and address; statuses get the fixed text (or the refusal) only.
    String where = address == null ? "literal" : address.getHostAddress();
    if (warn) {
      LOG.warn(
          "{} {} ({}) {}; not connecting ({})", subject, host, where, refusal.text(), settings);
    } else {
      LOG.debug(
          "{} {} ({}) {}; not connecting ({})", subject, host, where, refusal.text(), settings);
    }
    return new Refused(subject + " resolved to an address the egress policy refuses", refusal);
  }
}
