package io.bloomoperator.testing.servers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * One real PostgreSQL server per test JVM (Debian package {@code postgresql}), started on first use
 * in a fresh temporary directory and stopped at JVM exit.
 *
 * <p>It listens on 127.0.0.1 only, with password (scram-sha-256) authentication for TCP, so a wrong
 * password really fails; the superuser connects over the Unix socket in the temporary directory
 * without one. PostgreSQL refuses to run as root, so as root every server command runs as the
 * {@code postgres} OS user (created by the package). Durability is switched off; the data is
 * throwaway.
 */
public final class PostgresServer implements AutoCloseable {

  public static final String DATABASE = "bloom";
  public static final String USER = "bloom_reader";
  public static final String PASSWORD = "s3cret-Passw0rd";

  private static PostgresServer shared;

  private final Path binDir;
  private final Path dir;
  private final Path data;
  private final int port;
  private final boolean asPostgresUser;
  private final List<String> extraOptions;
  private final boolean keep;
  private boolean reused;

  /** The server of this JVM, started on first call. */
  public static synchronized PostgresServer shared() {
    if (shared == null) {
      shared = new PostgresServer();
      shared.start();
      Runtime.getRuntime().addShutdownHook(new Thread(shared::stop, "postgres-stop"));
    }
    return shared;
  }

  /**
   * A server of its own, separate from {@link #shared()}, started now with the extra {@code -c}
   * settings {@code settings} (e.g. {@code wal_level=logical}, which needs its own server: the
   * shared one cannot be restarted, its stop deletes its data directory). {@link #close()} stops it
   * and deletes its directory; it is also stopped at JVM exit.
   */
  public static PostgresServer dedicated(String... settings) {
    PostgresServer server = new PostgresServer(List.of(settings));
    server.start();
    Runtime.getRuntime().addShutdownHook(new Thread(server::stop, "postgres-stop"));
    return server;
  }

  /**
   * A server on {@code dir} that outlives this JVM, for benchmarks whose data takes minutes to load
   * (a 100M-row table): created there on first use, only started on later ones, with the extra
   * {@code -c} settings {@code settings}. {@link #close()} and JVM exit stop it and keep {@code
   * dir}. A server a killed run left running there is stopped first.
   */
  public static PostgresServer persistent(Path dir, String... settings) {
    PostgresServer server = new PostgresServer(List.of(settings), dir);
    server.start();
    Runtime.getRuntime().addShutdownHook(new Thread(server::stop, "postgres-stop"));
    return server;
  }

  /**
   * Whether this server's data directory existed before it was started (see {@link #persistent}).
   */
  public boolean reused() {
    return reused;
  }

  private PostgresServer() {
    this(List.of());
  }

  private PostgresServer(List<String> extraOptions) {
    this(extraOptions, null);
  }

  private PostgresServer(List<String> extraOptions, Path keptDir) {
    this.extraOptions = List.copyOf(extraOptions);
    this.binDir = findBinDir();
    this.asPostgresUser = "root".equals(System.getProperty("user.name"));
    this.keep = keptDir != null;
    try {
      this.dir = keep ? Files.createDirectories(keptDir) : Files.createTempDirectory("bloom-pg-");
      this.data = dir.resolve("data");
      try (ServerSocket socket = new ServerSocket(0)) {
        this.port = socket.getLocalPort();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@code jdbc:postgresql://127.0.0.1:<port>/bloom}, no credentials. */
  public String url() {
    return "jdbc:postgresql://127.0.0.1:" + port + "/" + DATABASE;
  }

  public int port() {
    return port;
  }

  /** A connection as {@link #USER} (who owns the database), for creating test data. */
  public Connection connect() throws SQLException {
    return DriverManager.getConnection(url(), USER, PASSWORD);
  }

  /** Runs statements as {@link #USER}. */
  public void execute(String... sql) {
    try (Connection c = connect();
        Statement s = c.createStatement()) {
      for (String statement : sql) {
        s.execute(statement);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("test SQL failed: " + e.getMessage(), e);
    }
  }

  private void start() {
    if (asPostgresUser) {
      run("chown", "-R", "postgres:postgres", dir.toString());
    }
    if (keep && Files.isDirectory(data)) {
      reused = true;
      if (Files.exists(data.resolve("postmaster.pid"))) {
        try {
          runAsServerUser(bin("pg_ctl"), "-D", data.toString(), "-m", "fast", "-w", "stop");
        } catch (IllegalStateException e) {
          // Not running: a stale pid file, which the start below replaces.
        }
      }
      startServer();
      return;
    }
    runAsServerUser(
        bin("initdb"),
        "-D",
        data.toString(),
        "-U",
        "postgres",
        "-E",
        "UTF8",
        "--locale=C",
        "--auth-local=trust",
        "--auth-host=scram-sha-256",
        "--no-sync");
    try {
      // Only 127.0.0.1 over TCP, password required; local socket trusted for the superuser.
      Files.writeString(
          data.resolve("pg_hba.conf"),
          """
          local all postgres trust
          local all all scram-sha-256
          host all all 127.0.0.1/32 scram-sha-256
          """,
          StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    startServer();
    psqlAsSuperuser(
        "postgres",
        "create user " + USER + " password '" + PASSWORD + "'",
        "create database " + DATABASE + " owner " + USER);
  }

  /** {@code pg_ctl start} on this server's data directory and port, waiting until it accepts. */
  private void startServer() {
    String options =
        String.join(
            " ",
            "-p",
            Integer.toString(port),
            "-k",
            dir.toString(),
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            "fsync=off",
            "-c",
            "synchronous_commit=off",
            "-c",
            "full_page_writes=off",
            "-c",
            "max_connections=50",
            "-c",
            "password_encryption=scram-sha-256",
            extraOptions.stream().map(o -> "-c " + o).collect(Collectors.joining(" ")));
    runAsServerUser(
        bin("pg_ctl"),
        "-D",
        data.toString(),
        "-o",
        options,
        "-l",
        dir.resolve("server.log").toString(),
        "-w",
        "-t",
        "60",
        "start");
  }

  /**
   * Crashes the server ({@code pg_ctl stop -m immediate}: no shutdown checkpoint, so the next start
   * runs crash recovery, as after a killed server) and starts it again on the same port and data;
   * returns once it accepts connections. What was committed stays (the WAL reached the OS; only an
   * OS crash would lose it with {@code fsync=off}), but with {@code synchronous_commit=off} a
   * commit can be acknowledged before its WAL is written: a writer that must not lose acknowledged
   * rows sets {@code synchronous_commit = on} in its session.
   */
  public synchronized void restart() {
    runAsServerUser(bin("pg_ctl"), "-D", data.toString(), "-m", "immediate", "-w", "stop");
    startServer();
  }

  /**
   * Runs statements as the superuser {@code postgres} (over the Unix socket), e.g. to create a role
   * with REPLICATION, which the database owner may not grant.
   */
  public void executeAsSuperuser(String... sql) {
    psqlAsSuperuser(DATABASE, sql);
  }

  private void psqlAsSuperuser(String database, String... sql) {
    List<String> command =
        new ArrayList<>(
            List.of(
                bin("psql"),
                "-h",
                dir.toString(),
                "-p",
                Integer.toString(port),
                "-U",
                "postgres",
                "-d",
                database,
                "-v",
                "ON_ERROR_STOP=1",
                "-q"));
    for (String statement : sql) {
      command.add("-c");
      command.add(statement);
    }
    runAsServerUser(command.toArray(String[]::new));
  }

  /**
   * Turns TLS on (a self-signed certificate for 127.0.0.1, made with {@code openssl}; a reload, not
   * a restart): clients with {@code sslmode=prefer} (PgJDBC's default) or {@code require} then
   * speak TLS, those with {@code disable} plain text.
   */
  public void enableTls() {
    run(
        "openssl",
        "req",
        "-new",
        "-x509",
        "-days",
        "2",
        "-nodes",
        "-subj",
        "/CN=127.0.0.1",
        "-keyout",
        data.resolve("server.key").toString(),
        "-out",
        data.resolve("server.crt").toString());
    if (asPostgresUser) {
      run("chown", "postgres:postgres", data.resolve("server.key").toString());
      run("chown", "postgres:postgres", data.resolve("server.crt").toString());
    }
    run("chmod", "600", data.resolve("server.key").toString());
    psqlAsSuperuser("postgres", "ALTER SYSTEM SET ssl = on", "SELECT pg_reload_conf()");
  }

  /**
   * Stops every process of the server (SIGSTOP to the postmaster, then to each of its children:
   * each backend is a session of its own): the kernel still accepts connections on its port, and
   * nothing answers them, nor any open session, until {@link #resume()}. Always resume in a
   * finally: a stopped server also ignores its stop at JVM exit.
   */
  public void pause() {
    signalAll("STOP");
  }

  /** Continues a server {@link #pause()} stopped. */
  public void resume() {
    signalAll("CONT");
  }

  private void signalAll(String signal) {
    long postmaster;
    try {
      postmaster = Long.parseLong(Files.readAllLines(data.resolve("postmaster.pid")).get(0).trim());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<String> command =
        new ArrayList<>(List.of("kill", "-" + signal, Long.toString(postmaster)));
    ProcessHandle.of(postmaster)
        .ifPresent(p -> p.children().forEach(c -> command.add(Long.toString(c.pid()))));
    run(command.toArray(String[]::new));
  }

  /** A connection as {@code user}, for a role a test created. */
  public Connection connect(String user, String password) throws SQLException {
    return DriverManager.getConnection(url(), user, password);
  }

  /** Stops a {@link #dedicated} server and deletes its directory (the shared one: at JVM exit). */
  @Override
  public synchronized void close() {
    if (this != shared && !stopped) {
      stop();
    }
  }

  private boolean stopped;

  private synchronized void stop() {
    if (stopped) {
      return;
    }
    stopped = true;
    try {
      runAsServerUser(bin("pg_ctl"), "-D", data.toString(), "-m", "immediate", "-w", "stop");
    } catch (RuntimeException e) {
      System.err.println("stopping PostgreSQL: " + e.getMessage());
    }
    if (!keep) {
      ServerProcesses.deleteTree(dir);
    }
  }

  private String bin(String name) {
    return binDir.resolve(name).toString();
  }

  private void runAsServerUser(String... command) {
    List<String> full = new ArrayList<>();
    if (asPostgresUser) {
      full.addAll(List.of("runuser", "-u", "postgres", "--"));
    }
    full.addAll(List.of(command));
    run(full.toArray(String[]::new));
  }

  private void run(String... command) {
    try {
      ServerProcesses.run(dir, command);
    } catch (IllegalStateException e) {
      throw new IllegalStateException(e.getMessage() + serverLog(), e);
    }
  }

  /** The server's log for a failure message, or nothing when there is none yet. */
  private String serverLog() {
    try {
      Path log = dir.resolve("server.log");
      return Files.isReadable(log) ? "\nserver.log:\n" + Files.readString(log) : "";
    } catch (IOException e) {
      return "";
    }
  }

  /** {@code pg_config --bindir}, else the newest /usr/lib/postgresql/N/bin with initdb. */
  private static Path findBinDir() {
    List<Path> candidates = new ArrayList<>();
    try {
      Process p = new ProcessBuilder("pg_config", "--bindir").redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
      if (p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0 && !out.isEmpty()) {
        candidates.add(Paths.get(out));
      }
    } catch (IOException e) {
      // No pg_config on the PATH; try the Debian layout.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    Path debian = Paths.get("/usr/lib/postgresql");
    if (Files.isDirectory(debian)) {
      try (Stream<Path> versions = Files.list(debian)) {
        versions
            .map(v -> v.resolve("bin"))
            .sorted(Comparator.comparing((Path v) -> versionOf(v)).reversed())
            .forEach(candidates::add);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return candidates.stream()
        .filter(
            b -> Files.isExecutable(b.resolve("initdb")) && Files.isExecutable(b.resolve("pg_ctl")))
        .findFirst()
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "PostgreSQL server binaries (initdb, "
                        + "pg_ctl) not found via pg_config --bindir or in /usr/lib/postgresql/*/bin; the "
                        + "JDBC tests need a real PostgreSQL: install the Debian package 'postgresql' "
                        + "(apt-get install postgresql)"));
  }

  private static int versionOf(Path bin) {
    try {
      return Integer.parseInt(bin.getParent().getFileName().toString());
    } catch (NumberFormatException e) {
      return 0;
    }
  }
}
