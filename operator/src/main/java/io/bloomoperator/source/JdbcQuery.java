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
 *   <li>It names none of the functions that read or write files on the database server, run
 *       programs, signal or lock other sessions, change settings, notify, or run SQL built at run
 *       time ({@code LOAD_FILE}, {@code pg_read_file}, {@code lo_export}, {@code
 *       pg_terminate_backend}, {@code dblink_exec}, {@code query_to_xml}, ...), and holds no
 *       PostgreSQL Unicode escape ({@code U&"..."}), which could spell such a name.
 *   <li>No control characters other than tab, newline and carriage return.
 * </ul>
 *
 * <p>The rule applies to string literals and quoted identifiers as well: a query that needs one of
 * these words or characters in a literal must be rewritten (a view on the database side). The
 * session is read-only besides ({@link JdbcDriver#makeReadOnly}). Neither is a sandbox: a list of
 * names cannot know every extension's functions, and a read-only transaction still lets functions
 * read files, signal sessions or reach other servers. What the query can do is what the database
 * role may do: it must be a least-privilege role that can only {@code SELECT} what the query reads.
 */
final class JdbcQuery {

  private static final Pattern START =
      Pattern.compile("(?i)\\s*(?:select|with)\\b.*", Pattern.DOTALL);
  private static final Pattern FORBIDDEN_WORD =
      Pattern.compile("(?i)\\b(load|infile|outfile|dumpfile|copy|into)\\b");
  private static final Pattern CONTROL = Pattern.compile("[\\x00-\\x08\\x0B\\x0C\\x0E-\\x1F\\x7F]");

  /**
   * Functions that read or write files on the database server, run programs, signal or lock other
   * sessions, change settings, send notifications or run SQL built at run time (which could call
   * any of the others), PostgreSQL's and MySQL/MariaDB's; matched as whole names, also quoted or
   * schema-qualified ({@code "pg_read_file"}, {@code pg_catalog.pg_read_file}), with or without the
   * parenthesis. {@code \b} is no boundary here: {@code _} is a word character, so {@code \bload\b}
   * does not match {@code load_file}.
   */
  private static final Pattern FORBIDDEN_FUNCTION =
      Pattern.compile(
          "(?i)(?<![A-Za-z0-9_$])("
              // files and programs on the database server
              + "load_file|pg_read_file|pg_read_binary_file|pg_ls_[a-z_]*|pg_stat_file"
              + "|pg_file_[a-z_]*|pg_logdir_ls|lo_import|lo_export|lo_get|lo_put|lo_create"
              + "|lo_creat|lo_unlink|lo_open|lo_from_bytea|lo_truncate[a-z0-9_]*|loread|lowrite"
              + "|sys_exec|sys_eval"
              // other sessions, the server, settings, locks, notifications
              + "|pg_terminate_backend|pg_cancel_backend|pg_signal_backend|pg_reload_conf"
              + "|pg_rotate_logfile|pg_promote|pg_switch_wal|pg_create_restore_point"
              + "|pg_backup_start|pg_backup_stop|pg_start_backup|pg_stop_backup"
              + "|pg_[a-z_]*replication[a-z_]*|pg_logical_emit_message|pg_notify|set_config"
              + "|pg_advisory[a-z_]*|pg_try_advisory[a-z_]*|get_lock|release_lock"
              + "|release_all_locks"
              // other servers and SQL built at run time
              + "|dblink[a-z_]*|query_to_xml[a-z_]*|cursor_to_xml[a-z_]*"
              + ")(?![A-Za-z0-9_$])");

  /** PostgreSQL's Unicode escapes ({@code U&"..."}) can spell any name past the check above. */
  private static final Pattern UNICODE_ESCAPE = Pattern.compile("(?i)(?<![A-Za-z0-9_$])u&[\"']");

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
    if (UNICODE_ESCAPE.matcher(statement).find()) {
      throw invalid("must not contain Unicode escapes (U&\"...\" or U&'...')");
    }
    Matcher function = FORBIDDEN_FUNCTION.matcher(statement);
    if (function.find()) {
      throw invalid(
          "must not call "
              + function.group(1).toLowerCase(Locale.ROOT)
              + " (functions that read or write server files, run programs, signal or lock other"
              + " sessions, change settings, notify or run SQL built at run time are refused"
              + " anywhere in the text)");
    }
    return statement;
  }

  private static IllegalArgumentException invalid(String what) {
    return new IllegalArgumentException("spec.source.jdbc.query " + what);
  }
}
