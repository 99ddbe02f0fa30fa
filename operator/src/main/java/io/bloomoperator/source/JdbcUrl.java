package io.bloomoperator.source;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/** Shows a JDBC URL without the credentials it may embed, and names the server it points to. */
final class JdbcUrl {

  /** {@code user:password@} before a host ({@code jdbc:mysql://u:p@host,u2:p2@host2/db}). */
  private static final Pattern USER_INFO = Pattern.compile("(?<=//|,)[^/,@?()\\[\\]]*@");
  /** MySQL's {@code address=(host=h)(user=u)(password=p)} form. */
  private static final Pattern PAREN_CREDENTIAL = Pattern.compile(
      "\\(\\s*(?i:[a-z0-9_.-]*(?:user|password|secret)[a-z0-9_.-]*)\\s*=[^)]*\\)");

  private JdbcUrl() {
  }

  /**
   * The URL without user info and without parameters naming a user, password or secret
   * ({@code user}, {@code password}, {@code sslpassword}, MySQL's {@code password1}...).
   */
  static String withoutCredentials(String url) {
    String shown = USER_INFO.matcher(url).replaceAll("");
    shown = PAREN_CREDENTIAL.matcher(shown).replaceAll("");
    int query = shown.indexOf('?');
    if (query < 0) {
      return shown;
    }
    List<String> kept = new ArrayList<>();
    for (String param : shown.substring(query + 1).split("&")) {
      String name = param.split("=", 2)[0].toLowerCase(Locale.ROOT);
      if (!param.isEmpty() && !name.contains("user") && !name.contains("password")
          && !name.contains("secret")) {
        kept.add(param);
      }
    }
    return shown.substring(0, query) + (kept.isEmpty() ? "" : "?" + String.join("&", kept));
  }

  /**
   * The server part ({@code host:port}, or several for failover URLs), for error messages;
   * {@code localhost} when the URL names none ({@code jdbc:postgresql:db}).
   */
  static String server(String url) {
    String shown = withoutCredentials(url);
    int start = shown.indexOf("//");
    if (start < 0) {
      return "localhost";
    }
    int end = shown.length();
    for (char c : new char[] {'/', '?'}) {
      int at = shown.indexOf(c, start + 2);
      if (at >= 0 && at < end) {
        end = at;
      }
    }
    String server = shown.substring(start + 2, end);
    return server.isEmpty() ? "localhost" : server;
  }
}
