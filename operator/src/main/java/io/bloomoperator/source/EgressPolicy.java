package io.bloomoperator.source;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Which addresses an http or jdbc source may connect to. A BloomFilter's author chooses the URL,
 * but the operator makes the request, from inside the cluster and with the operator's network
 * position; without a policy the author could make it fetch from places the author cannot reach:
 * the cloud metadata endpoint, the operator's own port, services on the node's loopback.
 *
 * <p>Denied by default: loopback, unspecified ({@code 0.0.0.0/8}, {@code ::}), link-local ({@code
 * 169.254.0.0/16}, which holds the metadata endpoint {@code 169.254.169.254}, and {@code
 * fe80::/10}), multicast, the reserved {@code 240.0.0.0/4} (with the broadcast address), the
 * metadata addresses outside those ranges ({@code fd00:ec2::254}, {@code 100.100.100.200}), and
 * every address of one of the operator's own network interfaces (its pod IP). IPv6 forms that carry
 * an IPv4 address (IPv4-mapped {@code ::ffff:a.b.c.d}, IPv4-compatible {@code ::a.b.c.d}, NAT64
 * {@code 64:ff9b::a.b.c.d} and local-use NAT64 {@code 64:ff9b:1::/48} with the IPv4 address in the
 * last four bytes, 6to4 {@code 2002:aabb:ccdd::/48}, Teredo {@code 2001:0::/32} with the inverted
 * client address in the last four bytes) are judged by both.
 *
 * <p>The administrator adds rules: {@code allow} entries admit addresses even inside a range denied
 * by default (e.g. an export service on a link-local address), {@code deny} entries refuse more
 * (e.g. the cluster's service CIDR, or the node network). An entry is a CIDR ({@code
 * 10.96.0.0/12}), an address ({@code 10.0.0.7}, {@code fd00::1}) or a host name, exact ({@code
 * exports.internal}) or with a leading dot for all names below it ({@code .svc.cluster.local}). A
 * host name rule matches the host as written in the URL (or the redirect); since an IP address can
 * always be written instead, deny rules that matter are CIDRs. Precedence: a deny rule beats an
 * allow rule, which beats the defaults.
 *
 * <p>The check applies to every address a host resolves to (a host with one refused address is
 * refused, so DNS answers mixing a public and an internal address do not help), and is made again
 * on the address a connection is actually made to: see {@link HttpClients}.
 */
public final class EgressPolicy {

  /** Why an address was refused; the text is fixed and safe to show. */
  public enum Refusal {
    DENIED("is denied by BLOOM_HTTP_DENY"),
    LOOPBACK("is a loopback address"),
    UNSPECIFIED("is an unspecified address"),
    LINK_LOCAL("is a link-local address (e.g. a cloud metadata endpoint)"),
    METADATA("is a cloud metadata endpoint"),
    MULTICAST("is a multicast or reserved address"),
    OPERATOR("is an address of the operator itself"),
    NOT_AN_ADDRESS("is digits and dots but not a dotted-quad IPv4 address");

    private final String text;

    Refusal(String text) {
      this.text = text;
    }

    /** E.g. "is a loopback address". */
    public String text() {
      return text;
    }
  }

  /** One address range, as raw bytes: the JDK turns IPv4-mapped addresses into IPv4 ones. */
  record Cidr(byte[] network, int prefix) {

    static Cidr parse(String text) {
      int slash = text.indexOf('/');
      String address = slash < 0 ? text : text.substring(0, slash);
      byte[] network =
          literal(address)
              .map(InetAddress::getAddress)
              .orElseThrow(() -> new IllegalArgumentException("not an IP address: " + address));
      if (network.length == 4 && address.contains(":")) {
        byte[] mapped = new byte[16];
        mapped[10] = (byte) 0xff;
        mapped[11] = (byte) 0xff;
        System.arraycopy(network, 0, mapped, 12, 4);
        network = mapped;
      }
      int bits = network.length * 8;
      int prefix = bits;
      if (slash >= 0) {
        try {
          prefix = Integer.parseInt(text.substring(slash + 1));
        } catch (NumberFormatException e) {
          prefix = -1;
        }
        if (prefix < 0 || prefix > bits) {
          throw new IllegalArgumentException("not a prefix length: " + text);
        }
      }
      return new Cidr(network, prefix);
    }

    boolean contains(byte[] address) {
      if (network.length != address.length) {
        return false;
      }
      int full = prefix / 8;
      for (int i = 0; i < full; i++) {
        if (network[i] != address[i]) {
          return false;
        }
      }
      int rest = prefix % 8;
      if (rest == 0) {
        return true;
      }
      int mask = (0xff << (8 - rest)) & 0xff;
      return (network[full] & mask) == (address[full] & mask);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Cidr other
          && prefix == other.prefix
          && Arrays.equals(network, other.network);
    }

    @Override
    public int hashCode() {
      return 31 * Arrays.hashCode(network) + prefix;
    }

    @Override
    public String toString() {
      return Arrays.toString(network) + "/" + prefix;
    }
  }

  /** What HTTP clients (and the JDK) take as an IP address instead of a name to resolve. */
  private static final Pattern IP_LITERAL =
      Pattern.compile("([0-9a-fA-F]*:[0-9a-fA-F:.]*)|([\\d.]+)");

  private static final String OCTET = "(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
  private static final Pattern DOTTED_QUAD = Pattern.compile(OCTET + "(\\." + OCTET + "){3}");
  private static final Pattern HOST_NAME =
      Pattern.compile("\\.?[a-z0-9_]([-a-z0-9_]*[a-z0-9_])?(\\.[a-z0-9_]([-a-z0-9_]*[a-z0-9_])?)*");

  private static final List<Cidr> LOOPBACK = cidrs("127.0.0.0/8", "::1/128");
  private static final List<Cidr> UNSPECIFIED = cidrs("0.0.0.0/8", "::/128");
  private static final List<Cidr> LINK_LOCAL = cidrs("169.254.0.0/16", "fe80::/10");
  private static final List<Cidr> METADATA = cidrs("fd00:ec2::254/128", "100.100.100.200/32");
  private static final List<Cidr> MULTICAST = cidrs("224.0.0.0/4", "240.0.0.0/4", "ff00::/8");

  /**
   * IPv6 ranges whose last four bytes are an IPv4 address: IPv4-mapped, IPv4-compatible, NAT64 (the
   * well-known prefix, and the local-use prefix with the usual /96 translation prefix).
   */
  private static final List<Cidr> EMBEDDING_IPV4 =
      cidrs("::ffff:0:0/96", "::/96", "64:ff9b::/96", "64:ff9b:1::/48");

  /** 6to4: the IPv4 address of the site's router follows the prefix (bytes 2 to 5). */
  private static final Cidr SIX_TO_FOUR = Cidr.parse("2002::/16");

  /** Teredo: the client's IPv4 address is the last four bytes, every bit inverted. */
  private static final Cidr TEREDO = Cidr.parse("2001::/32");

  private final List<Cidr> allow;
  private final List<Cidr> deny;
  private final List<String> allowHosts;
  private final List<String> denyHosts;

  private EgressPolicy(
      List<Cidr> allow, List<Cidr> deny, List<String> allowHosts, List<String> denyHosts) {
    this.allow = List.copyOf(allow);
    this.deny = List.copyOf(deny);
    this.allowHosts = List.copyOf(allowHosts);
    this.denyHosts = List.copyOf(denyHosts);
  }

  /** Only the default denials. */
  public static EgressPolicy defaults() {
    return new EgressPolicy(List.of(), List.of(), List.of(), List.of());
  }

  /**
   * A policy with extra rules; each list holds entries separated by commas or whitespace (see the
   * class comment), {@code null} or blank for none.
   *
   * @throws IllegalArgumentException when an entry is neither an address, a CIDR nor a host name
   */
  public static EgressPolicy of(String allow, String deny) {
    return of(allow, deny, "BLOOM_HTTP_ALLOW", "BLOOM_HTTP_DENY");
  }

  /**
   * As {@link #of(String, String)}, for rules read from other settings ({@code allowSetting},
   * {@code denySetting}), which a parse error names.
   */
  public static EgressPolicy of(
      String allow, String deny, String allowSetting, String denySetting) {
    List<Cidr> allowCidrs = new ArrayList<>();
    List<Cidr> denyCidrs = new ArrayList<>();
    List<String> allowHosts = new ArrayList<>();
    List<String> denyHosts = new ArrayList<>();
    parse(allowSetting, allow, allowCidrs, allowHosts);
    parse(denySetting, deny, denyCidrs, denyHosts);
    return new EgressPolicy(allowCidrs, denyCidrs, allowHosts, denyHosts);
  }

  private static void parse(String setting, String text, List<Cidr> cidrs, List<String> hosts) {
    if (text == null) {
      return;
    }
    for (String entry : text.strip().split("[,\\s]+")) {
      if (entry.isEmpty()) {
        continue;
      }
      String lower = entry.toLowerCase(Locale.ROOT);
      if (lower.startsWith("*.")) {
        lower = lower.substring(1);
      }
      String address = lower.contains("/") ? lower.substring(0, lower.indexOf('/')) : lower;
      if (IP_LITERAL.matcher(address).matches() || address.startsWith("[")) {
        try {
          cidrs.add(Cidr.parse(lower.replace("[", "").replace("]", "")));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(setting + ": " + e.getMessage());
        }
      } else if (HOST_NAME.matcher(lower).matches()) {
        hosts.add(stripDot(lower));
      } else {
        throw new IllegalArgumentException(
            setting + ": \"" + entry + "\" is neither an IP " + "address, a CIDR nor a host name");
      }
    }
  }

  /**
   * The address {@code host} names when it is an IPv6 literal or a dotted-quad IPv4 address, parsed
   * without asking DNS; else empty.
   */
  static Optional<InetAddress> literal(String host) {
    String bare =
        host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    boolean ipv6 = bare.contains(":");
    if (!(ipv6 ? IP_LITERAL : DOTTED_QUAD).matcher(bare).matches()) {
      return Optional.empty();
    }
    try {
      // Text with a colon is never looked up, and a dotted quad is always an address.
      return Optional.of(InetAddress.getByName(bare));
    } catch (UnknownHostException e) {
      return Optional.empty();
    }
  }

  /**
   * The address {@code host} is when it is an IP literal (IPv6, bracketed or not, or a dotted-quad
   * IPv4 address), parsed without asking DNS; else empty.
   */
  public static Optional<InetAddress> literalAddress(String host) {
    return literal(host);
  }

  /**
   * Why connecting to anything the host name {@code host} resolves to is refused by a host-name
   * deny rule; empty when no such rule matches (its addresses are still judged by {@link #check}).
   */
  public Optional<Refusal> checkName(String host) {
    return matches(denyHosts, stripDot(host.toLowerCase(Locale.ROOT)))
        ? Optional.of(Refusal.DENIED)
        : Optional.empty();
  }

  /**
   * Why a URL host that is an IP literal is refused, checked before any connection (by {@link
   * EgressCheckedDns}, to which the HTTP client hands literals like names); empty for an allowed
   * literal and for a host name, which is checked when it is resolved. Digits and dots that are no
   * dotted quad ({@code 127.1}, {@code 2130706433}, {@code 1.2.3.4.5}) are refused: the JDK reads
   * some as addresses and looks others up in DNS, and neither is worth the ambiguity.
   */
  public Optional<Refusal> checkLiteral(String host) {
    String bare =
        host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    if (!IP_LITERAL.matcher(bare).matches()) {
      return Optional.empty();
    }
    Optional<InetAddress> address = literal(bare);
    if (address.isEmpty()) {
      return Optional.of(Refusal.NOT_AN_ADDRESS);
    }
    return check(host, address.get());
  }

  /**
   * Why a connection to {@code address}, reached through the URL host {@code host}, is refused;
   * empty when it is allowed.
   */
  public Optional<Refusal> check(String host, InetAddress address) {
    String name = stripDot(host.toLowerCase(Locale.ROOT));
    if (matches(denyHosts, name)) {
      return Optional.of(Refusal.DENIED);
    }
    byte[] bytes = address.getAddress();
    byte[] ipv4 = embeddedIpv4(bytes);
    if (in(deny, bytes) || (ipv4 != null && in(deny, ipv4))) {
      return Optional.of(Refusal.DENIED);
    }
    if (matches(allowHosts, name) || in(allow, bytes) || (ipv4 != null && in(allow, ipv4))) {
      return Optional.empty();
    }
    Optional<Refusal> refusal = defaultRefusal(bytes);
    if (refusal.isEmpty() && ipv4 != null) {
      refusal = defaultRefusal(ipv4);
    }
    if (refusal.isEmpty() && isLocalInterface(address)) {
      refusal = Optional.of(Refusal.OPERATOR);
    }
    return refusal;
  }

  private static Optional<Refusal> defaultRefusal(byte[] address) {
    if (in(LOOPBACK, address)) {
      return Optional.of(Refusal.LOOPBACK);
    }
    if (in(UNSPECIFIED, address)) {
      return Optional.of(Refusal.UNSPECIFIED);
    }
    if (in(LINK_LOCAL, address)) {
      return Optional.of(Refusal.LINK_LOCAL);
    }
    if (in(METADATA, address)) {
      return Optional.of(Refusal.METADATA);
    }
    if (in(MULTICAST, address)) {
      return Optional.of(Refusal.MULTICAST);
    }
    return Optional.empty();
  }

  /**
   * The IPv4 address an IPv6 address carries (see {@link #EMBEDDING_IPV4}, {@link #SIX_TO_FOUR},
   * {@link #TEREDO}), or null: a translator or relay on the path may deliver the packets to that
   * IPv4 address.
   */
  static byte[] embeddedIpv4(byte[] address) {
    if (address.length != 16) {
      return null;
    }
    if (in(EMBEDDING_IPV4, address)) {
      return Arrays.copyOfRange(address, 12, 16);
    }
    if (SIX_TO_FOUR.contains(address)) {
      return Arrays.copyOfRange(address, 2, 6);
    }
    if (TEREDO.contains(address)) {
      byte[] ipv4 = Arrays.copyOfRange(address, 12, 16);
      for (int i = 0; i < ipv4.length; i++) {
        ipv4[i] = (byte) ~ipv4[i];
      }
      return ipv4;
    }
    return null;
  }

  private static boolean isLocalInterface(InetAddress address) {
    try {
      if (NetworkInterface.getByInetAddress(address) != null) {
        return true;
      }
      // An IPv4-mapped form of one of our IPv4 addresses reaches us just as well.
      byte[] ipv4 = embeddedIpv4(address.getAddress());
      return ipv4 != null
          && NetworkInterface.getByInetAddress(Inet4Address.getByAddress(ipv4)) != null;
    } catch (SocketException | UnknownHostException e) {
      // The interfaces cannot be listed: refuse rather than guess.
      return true;
    }
  }

  private static boolean in(List<Cidr> cidrs, byte[] address) {
    for (Cidr cidr : cidrs) {
      if (cidr.contains(address)) {
        return true;
      }
    }
    return false;
  }

  private static boolean matches(List<String> rules, String host) {
    for (String rule : rules) {
      if (rule.startsWith(".")
          ? host.endsWith(rule) || host.equals(rule.substring(1))
          : host.equals(rule)) {
        return true;
      }
    }
    return false;
  }

  private static String stripDot(String host) {
    return host.endsWith(".") ? host.substring(0, host.length() - 1) : host;
  }

  private static List<Cidr> cidrs(String... texts) {
    return Arrays.stream(texts).map(Cidr::parse).toList();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof EgressPolicy other
        && allow.equals(other.allow)
        && deny.equals(other.deny)
        && allowHosts.equals(other.allowHosts)
        && denyHosts.equals(other.denyHosts);
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(allow, deny, allowHosts, denyHosts);
  }

  @Override
  public String toString() {
    return "EgressPolicy[allow="
        + allow
        + " "
        + allowHosts
        + ", deny="
        + deny
        + " "
        + denyHosts
        + "]";
  }
}
