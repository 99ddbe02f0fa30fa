package io.bloomoperator.testing.servers;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * One real Redis server per test JVM (Debian package {@code redis-server}), started on first use on
 * a free port of 127.0.0.1 and stopped at JVM exit. Persistence is off ({@code --save ''}, {@code
 * --appendonly no}); its working directory is a fresh temporary directory. It can run as root. A
 * missing binary fails the test with a message naming the package: never a skip.
 */
public final class RedisServer {

  private static final long STARTUP_TIMEOUT_MILLIS = 20_000;

  private static RedisServer shared;

  private final Process process;
  private final Path dir;
  private final int port;

  private RedisServer(Process process, Path dir, int port) {
    this.process = process;
    this.dir = dir;
    this.port = port;
  }

  /** The server of this JVM, started on first call. */
  public static synchronized RedisServer shared() {
    if (shared == null) {
      shared = start();
      Runtime.getRuntime().addShutdownHook(new Thread(shared::stop, "redis-stop"));
    }
    return shared;
  }

  /** Always 127.0.0.1: the server listens nowhere else. */
  public String host() {
    return "127.0.0.1";
  }

  public int port() {
    return port;
  }

  /** {@code redis://127.0.0.1:<port>}, the form Redis clients take. */
  public String url() {
    return "redis://" + host() + ":" + port;
  }

  /** Sends PING and returns whether the answer was PONG. */
  public boolean ping() {
    return ping(port);
  }

  private static RedisServer start() {
    Path binary = findBinary();
    return ServerProcesses.startOnFreePort(port -> startOn(binary, port));
  }

  private static RedisServer startOn(Path binary, int port) {
    Path dir;
    Process process;
    try {
      dir = Files.createTempDirectory("bloom-redis-");
      Path log = dir.resolve("redis.log");
      process =
          new ProcessBuilder(
                  binary.toString(),
                  "--port",
                  Integer.toString(port),
                  "--bind",
                  "127.0.0.1",
                  "--save",
                  "",
                  "--appendonly",
                  "no",
                  "--dir",
                  dir.toString(),
                  "--daemonize",
                  "no")
              .directory(dir.toFile())
              .redirectErrorStream(true)
              .redirectOutput(log.toFile())
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + binary, e);
    }
    RedisServer server = new RedisServer(process, dir, port);
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STARTUP_TIMEOUT_MILLIS);
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        String log = server.log();
        server.stop();
        throw new IllegalStateException(
            "redis-server on port " + port + " exited with " + process.exitValue() + ":\n" + log);
      }
      if (ping(port)) {
        return server;
      }
      ServerProcesses.sleep(50, "redis-server");
    }
    String log = server.log();
    server.stop();
    throw new IllegalStateException(
        "redis-server on port "
            + port
            + " did not answer PING within "
            + STARTUP_TIMEOUT_MILLIS
            + " ms:\n"
            + log);
  }

  private void stop() {
    // SIGTERM: with persistence off, redis-server exits at once.
    ServerProcesses.stop(process, 10);
    ServerProcesses.deleteTree(dir);
  }

  private String log() {
    try {
      return Files.readString(dir.resolve("redis.log"));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  /** One RESP PING on a fresh connection; false while the server is not listening yet. */
  private static boolean ping(int port) {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
      socket.setSoTimeout(1000);
      OutputStream out = socket.getOutputStream();
      out.write("*1\r\n$4\r\nPING\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      byte[] reply = new byte[7];
      int read = 0;
      while (read < reply.length) {
        int n = in.read(reply, read, reply.length - read);
        if (n < 0) {
          break;
        }
        read += n;
      }
      return "+PONG\r\n".equals(new String(reply, 0, read, StandardCharsets.US_ASCII));
    } catch (IOException e) {
      return false;
    }
  }

  private static Path findBinary() {
    return ServerProcesses.find(
        "redis-server",
        "the tests need a real Redis: install the Debian "
            + "package 'redis-server' (apt-get install redis-server)");
  }
}
