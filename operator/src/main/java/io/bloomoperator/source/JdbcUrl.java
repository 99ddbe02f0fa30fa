package io.bloomoperator.source;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one JDBC URL form the operator accepts, {@code jdbc:<driver>://<host>[:<port>][/<database>]
 * [?<name>=<value>&...]}, parsed strictly so that nothing the operator did not check reaches a
 * driver.
 *
 * <p>Exactly one host (a DNS name, an IPv4 address or a bracketed IPv6 address): no failover or
 * load-balancing lists, no {@code address=(...)} or {@code (host=...)} forms, no {@code
 * replication:}/{@code loadbalance:}/{@code sequential:}/{@code aurora:} prefixes, no {@code
 * mysql+srv}, no host-less form ({@code jdbc:postgresql:db}), no user info ({@code
 * user:password@host}; credentials come from {@code credentialsSecret}). Parameters must be on the
 * driver's allowlist ({@link JdbcDriver#allowedParameters()}), each at most once, with a value of
 * the expected shape; names are compared exactly. No percent-encoding anywhere, so a driver cannot
 * decode a name or value into something other than what was checked. The driver receives the URL
 * rebuilt from the parsed parts ({@link Parsed#url()}), not the user's text.
 */
public final class JdbcUrl {

  /** One DNS label; IPv4 addresses match too. */
  private static final String LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";

  private static final Pattern HOST_NAME = Pattern.compile(LABEL + "(?:\\." + LABEL + ")*\\.?");
  private static final Pattern IPV6 = Pattern.compile("\\[[0-9A-Fa-f:.]{2,45}\\]");
  private static final Pattern PORT = Pattern.compile("[0-9]{1,5}");
  private static final Pattern DATABASE = Pattern.compile("[A-Za-z0-9_$.-]{1,64}");
  private static final Pattern NAME = Pattern.compile("[A-Za-z][A-Za-z0-9]{0,63}");
  private static final Pattern FORM =
      Pattern.compile(
          "(?i:jdbc:(postgresql|mysql|mariadb))://([^/?]*)(?:/([^?]*))?(?:\\?(.*))?",
          Pattern.DOTALL);
  private static final int MAX_HOST_LENGTH = 253;

  private JdbcUrl() {}

  /** A URL that passed {@link #parse}: the driver, the single server and the allowed settings. */
  public static final class Parsed {
    private final JdbcDriver driver;
    private final String host;
    private final int port;
    private final String database;
    private final Map<String, String> parameters;

    private Parsed(
        JdbcDriver driver, String host, int port, String database, Map<String, String> parameters) {
      this.driver = driver;
      this.host = host;
      this.port = port;
      this.database = database;
      this.parameters = Map.copyOf(parameters);
    }

    JdbcDriver driver() {
      return driver;
    }

    /**
     * The host the driver connects to, as written (a name, an IPv4 address or an IPv6 address
     * without brackets), lower-cased.
     */
    public String host() {
      return host;
    }

    /** The port, the driver's default when the URL names none. */
    public int port() {
      return port;
    }

    /** The database, or {@code null} when the URL names none. */
    public String database() {
      return database;
    }

    /** The allowed parameters of the URL, by name. */
    public Map<String, String> parameters() {
      return parameters;
    }

    /** {@code host:port} ({@code [v6]:port}), for messages. */
    public String server() {
      return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }

    /** The URL handed to the driver, rebuilt from the checked parts only. */
    public String url() {
      StringBuilder url =
          new StringBuilder(driver.prefix()).append("//").append(server()).append('/');
      if (database != null) {
        url.append(database);
      }
      String separator = "?";
      for (Map.Entry<String, String> p : new TreeMap<>(parameters).entrySet()) {
        url.append(separator).append(p.getKey()).append('=').append(p.getValue());
        separator = "&";
      }
      return url.toString();
    }

    @Override
    public String toString() {
      return url();
    }
  }

  /**
   * Parses and checks a URL (see the class comment).
   *
   * @throws IllegalArgumentException naming what is not allowed (the URL's values are not repeated,
   *     parameter names only when they look like names)
   */
  public static Parsed parse(String url) {
    JdbcDriver driver = JdbcDriver.forUrl(url);
    Matcher form = FORM.matcher(url);
    if (!form.matches()) {
      throw invalid(
          "must have the form "
              + driver.prefix()
              + "//host[:port][/database]"
              + "[?parameters]; host-less URLs, failover, load-balancing, replication and other "
              + "driver-specific forms are not supported");
    }
    String authority = form.group(2);
    if (authority.indexOf('@') >= 0) {
      throw invalid(
          "must not carry credentials (user@host); put them in "
              + "spec.source.jdbc.credentialsSecret");
    }
    if (authority.indexOf(',') >= 0) {
      throw invalid("must name exactly one host (no failover or load-balancing lists)");
    }
    String host;
    String port = null;
    if (authority.startsWith("[")) {
      int end = authority.indexOf(']');
      host = end < 0 ? authority : authority.substring(0, end + 1);
      if (end >= 0 && end + 1 < authority.length()) {
        if (authority.charAt(end + 1) != ':') {
          throw invalid("has a malformed host");
        }
        port = authority.substring(end + 2);
      }
      if (!IPV6.matcher(host).matches()) {
        throw invalid("has a malformed IPv6 address");
      }
      host = host.substring(1, host.length() - 1);
    } else {
      int colon = authority.indexOf(':');
      host = colon < 0 ? authority : authority.substring(0, colon);
      if (colon >= 0) {
        port = authority.substring(colon + 1);
      }
      if (host.isEmpty()) {
        throw invalid("must name a host");
      }
      if (host.length() > MAX_HOST_LENGTH || !HOST_NAME.matcher(host).matches()) {
        throw invalid(
            "has a malformed host (a DNS name or an IP address is expected; "
                + "driver-specific forms such as address=(...) are not supported)");
      }
    }
    int portNumber = driver.defaultPort();
    if (port != null) {
      if (!PORT.matcher(port).matches()
          || Integer.parseInt(port) < 1
          || Integer.parseInt(port) > 65535) {
        throw invalid("has a malformed port (1-65535)");
      }
      portNumber = Integer.parseInt(port);
    }
    String database = form.group(3);
    if (database != null && database.isEmpty()) {
      database = null;
    }
    if (database != null && !DATABASE.matcher(database).matches()) {
      throw invalid(
          "has a malformed database name (letters, digits, _ $ . - only, at most " + "64)");
    }
    Map<String, String> parameters = parameters(driver, form.group(4));
    return new Parsed(driver, host.toLowerCase(Locale.ROOT), portNumber, database, parameters);
  }

  private static Map<String, String> parameters(JdbcDriver driver, String query) {
    Map<String, String> parameters = new LinkedHashMap<>();
    if (query == null) {
      return parameters;
    }
    Map<String, Pattern> allowed = driver.allowedParameters();
    for (String parameter : query.split("&", -1)) {
      int equals = parameter.indexOf('=');
      String name = equals < 0 ? parameter : parameter.substring(0, equals);
      if (!NAME.matcher(name).matches()) {
        throw invalid(
            "has a malformed parameter (name=value pairs separated by &, names of "
                + "letters and digits)");
      }
      Pattern value = allowed.get(name);
      if (value == null) {
        throw invalid(
            "parameter "
                + name
                + " is not allowed for "
                + driver.prefix()
                + " URLs (allowed: "
                + String.join(", ", new TreeSet<>(allowed.keySet()))
                + ")");
      }
      if (equals < 0 || !value.matcher(parameter.substring(equals + 1)).matches()) {
        throw invalid("parameter " + name + " must match " + value.pattern());
      }
      if (parameters.put(name, parameter.substring(equals + 1)) != null) {
        throw invalid("parameter " + name + " is given twice");
      }
    }
    return parameters;
  }

  private static IllegalArgumentException invalid(String what) {
    return new IllegalArgumentException("spec.source.jdbc.url " + what);
  }
}
