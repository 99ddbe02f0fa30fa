package io.bloomoperator.source;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The rule a {@code jdbc} query must follow: one read-only statement, checked on the raw text
 * without parsing SQL, so that it errs on refusing.
 *
 * <ul>
 *   <li>It starts with {@code SELECT} or {@code WITH} (case-insensitive, after whitespace).
 *   <li>It holds no {@code ;} except one at the very end (dropped before it is sent), so a driver
 *       cannot split it into several statements.
 *   <li>It holds no comment opener ({@code --}, {@code /*}, and for MySQL/MariaDB {@code #}), which
 *       could hide text from this check or carry MySQL's executable comments.
 *   <li>It holds none of the words {@code LOAD}, {@code INFILE}, {@code OUTFILE}, {@code DUMPFILE},
 *       {@code COPY}, {@code INTO} (case-insensitive, as whole words): they start file transfers
 *       between the database and a file system, or write. MariaDB Connector/J sends a local file to
 *       the server whenever the query text names it after {@code LOAD DATA LOCAL INFILE}, even with
 *       local infile disabled.
 *   <li>No control characters other than tab, newline and carriage return.
 * </ul>
 *
 * <p>The rule applies to string literals and quoted identifiers as well: a query that needs one of
 * these words or characters in a literal must be rewritten (a view on the database side). The
 * session is read-only besides ({@link JdbcDriver#makeReadOnly}), so what passes still cannot
 * write.
 */
final class JdbcQuery {

  private static final Pattern START =
      Pattern.compile("(?i)\\s*(?:select|with)\\b.*", Pattern.DOTALL);
  private static final Pattern FORBIDDEN_WORD =
      Pattern.compile("(?i)\\b(load|infile|outfile|dumpfile|copy|into)\\b");
  private static final Pattern CONTROL = Pattern.compile("[\\x00-\\x08\\x0B\\x0C\\x0E-\\x1F\\x7F]");

  private JdbcQuery() {}

  /**
   * The statement to send.
   *
   * @throws IllegalArgumentException saying which part of the rule the query breaks
   */
  static String check(String query, JdbcDriver driver) {
    String statement = query.strip();
    if (statement.endsWith(";")) {
      statement = statement.substring(0, statement.length() - 1).strip();
    }
    if (!START.matcher(statement).matches()) {
      throw invalid("must be a single SELECT or WITH statement");
    }
    if (statement.indexOf(';') >= 0) {
      throw invalid("must be a single statement (no ; except at the end)");
    }
    if (statement.contains("--")
        || statement.contains("/*")
        || (driver != JdbcDriver.POSTGRESQL && statement.indexOf('#') >= 0)) {
      throw invalid(
          "must not contain comments (--, /*"
              + (driver != JdbcDriver.POSTGRESQL ? ", #" : "")
              + "), not even inside string literals");
    }
    if (CONTROL.matcher(statement).find()) {
      throw invalid("must not contain control characters");
    }
    Matcher word = FORBIDDEN_WORD.matcher(statement);
    if (word.find()) {
      throw invalid(
          "must not contain the word "
              + word.group(1).toUpperCase(Locale.ROOT)
              + " (LOAD, INFILE, OUTFILE, DUMPFILE, COPY and INTO are refused anywhere in the "
              + "text, string literals included)");
    }
    return statement;
  }

  private static IllegalArgumentException invalid(String what) {
    return new IllegalArgumentException("spec.source.jdbc.query " + what);
  }
}
