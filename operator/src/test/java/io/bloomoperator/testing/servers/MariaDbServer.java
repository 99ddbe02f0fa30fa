package io.bloomoperator.testing.servers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One real MariaDB server per test JVM (Debian package {@code mariadb-server}), started on first
 * use in a fresh temporary directory and stopped at JVM exit. It speaks the MySQL protocol, so it
 * serves both {@code jdbc:mysql:} and {@code jdbc:mariadb:} URLs.
 *
 * <p>It listens on 127.0.0.1 only. {@link #USER} has a password and every right on {@link
 * #DATABASE}, so a test can show what a query could do with such a user; {@code LOCAL INFILE} is
 * enabled on the server side ({@code --local-infile=1}), so only the client decides whether a local
 * file is sent. Test data is created as the server's {@code root} over the Unix socket with the
 * {@code mariadb} client (no JDBC driver needed for setup). mariadbd does not run as root: as root
 * it is started with {@code --user=mysql} (the OS user the package creates). Durability is switched
 * off; the data is throwaway. A missing binary fails the test with a message naming the package:
 * never a skip.
 */
public final class MariaDbServer {

  public static final String DATABASE = "bloom";
  public static final String USER = "bloom_reader";
  public static final String PASSWORD = "s3cret-Passw0rd";

  private static final long STARTUP_TIMEOUT_MILLIS = 60_000;

  private static MariaDbServer shared;

  private final Path dir;
  private final int port;
  private final boolean asMysqlUser;
  private Process process;

  /** The server of this JVM, started on first call. */
  public static synchronized MariaDbServer shared() {
    if (shared == null) {
      shared = new MariaDbServer();
      shared.start();
      Runtime.getRuntime().addShutdownHook(new Thread(shared::stop, "mariadb-stop"));
    }
    return shared;
  }

  private MariaDbServer() {
    this.asMysqlUser = "root".equals(System.getProperty("user.name"));
    try {
      this.dir = Files.createTempDirectory("bloom-mariadb-");
      try (ServerSocket socket = new ServerSocket(0)) {
        this.port = socket.getLocalPort();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public int port() {
    return port;
  }

  /** {@code <scheme>://127.0.0.1:<port>/bloom}, no credentials; scheme {@code jdbc:mysql:}... */
  public String url(String scheme) {
    return scheme + "//127.0.0.1:" + port + "/" + DATABASE;
  }

  /** Runs SQL as the server's root in {@link #DATABASE}. */
  public void execute(String... sql) {
    client(String.join(";\n", sql));
  }

  /**
   * Runs a script of the {@code mariadb} client as root in {@link #DATABASE}, as is (with {@code
   * delimiter} lines for stored routines).
   */
  public void script(String script) {
    client(script);
  }

  /** Runs one query as root in {@link #DATABASE} and returns its rows, tab-separated. */
  public List<String> query(String sql) {
    String out = client(sql);
    List<String> rows = new ArrayList<>();
    for (String line : out.split("\n")) {
      if (!line.isEmpty()) {
        rows.add(line);
      }
    }
    return rows;
  }

  private String client(String sql) {
    return run(
        binary("mariadb").toString(),
        "--no-defaults",
        "-S",
        socket(),
        "-u",
        "root",
        "-N",
        "-B",
        "-D",
        DATABASE,
        "-e",
        sql);
  }

  private String socket() {
    return dir.resolve("mysqld.sock").toString();
  }

  private void start() {
    Path data = dir.resolve("data");
    List<String> install = new ArrayList<>();
    if (asMysqlUser) {
      run("chown", "mysql:mysql", dir.toString());
      install.addAll(List.of("runuser", "-u", "mysql", "--"));
    }
    install.addAll(
        List.of(
            binary("mariadb-install-db").toString(),
            "--no-defaults",
            "--datadir=" + data,
            "--auth-root-authentication-method=normal",
            "--skip-test-db"));
    run(install.toArray(String[]::new));
    List<String> server = new ArrayList<>(List.of(binary("mariadbd").toString(), "--no-defaults"));
    if (asMysqlUser) {
      server.add("--user=mysql");
    }
    server.addAll(
        List.of(
            "--datadir=" + data,
            "--socket=" + socket(),
            "--port=" + port,
            "--bind-address=127.0.0.1",
            "--skip-name-resolve",
            "--pid-file=" + dir.resolve("mysqld.pid"),
            "--log-error=" + dir.resolve("error.log"),
            "--local-infile=1",
            "--skip-log-bin",
            "--innodb-buffer-pool-size=64M",
            "--innodb-log-file-size=16M",
            "--innodb-flush-log-at-trx-commit=0",
            "--max-connections=50"));
    try {
      process =
          new ProcessBuilder(server)
              .directory(dir.toFile())
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve("stdout.log").toFile())
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start mariadbd", e);
    }
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STARTUP_TIMEOUT_MILLIS);
    while (!listening()) {
      if (!process.isAlive() || System.nanoTime() > deadline) {
        String log = log();
        stop();
        throw new IllegalStateException("mariadbd on port " + port + " did not start:\n" + log);
      }
      sleep(100);
    }
    run(
        binary("mariadb").toString(),
        "--no-defaults",
        "-S",
        socket(),
        "-u",
        "root",
        "-e",
        "create database "
            + DATABASE
            + ";"
            + "create user '"
            + USER
            + "'@'127.0.0.1' identified by '"
            + PASSWORD
            + "';"
            + "grant all on "
            + DATABASE
            + ".* to '"
            + USER
            + "'@'127.0.0.1'");
  }

  private boolean listening() {
    if (!Files.exists(dir.resolve("mysqld.sock"))) {
      return false;
    }
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private void stop() {
    if (process != null) {
      ServerProcesses.stop(process, 30); // SIGTERM: a clean shutdown, quick with durability off
    }
    ServerProcesses.deleteTree(dir);
  }

  private String log() {
    try {
      return Files.readString(dir.resolve("error.log"));
    } catch (IOException e) {
      return "(no error.log: " + e + ")";
    }
  }

  private String run(String... command) {
    return ServerProcesses.run(dir, command);
  }

  private static Path binary(String name) {
    return ServerProcesses.find(
        name,
        "the MySQL/MariaDB JDBC tests need a real MariaDB: install "
            + "the Debian package 'mariadb-server' (apt-get install mariadb-server)");
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for mariadbd", e);
    }
  }
}
