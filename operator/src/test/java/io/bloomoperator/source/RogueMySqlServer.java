package io.bloomoperator.source;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A hostile MySQL-protocol server on 127.0.0.1: it accepts any login, answers {@code SET ...}
 * statements with OK so that drivers get past their session setup, and answers every other {@code
 * COM_QUERY} with a {@code LOCAL INFILE} request for a file of its choosing, as a server trying to
 * read the client's files would. Every byte it receives is recorded.
 */
final class RogueMySqlServer implements AutoCloseable {

  private static final int COM_QUIT = 0x01;
  private static final int COM_QUERY = 0x03;
  private static final int CAPABILITIES =
      0x1 | 0x2 | 0x4 | 0x8 | 0x80 | 0x200 | 0x2000 | 0x8000 | 0x20000 | 0x80000 | 0x200000;

  private final String requestedFile;
  private final ServerSocket socket;
  private final Thread acceptor;
  private final ByteArrayOutputStream received = new ByteArrayOutputStream();
  private final List<String> queries = new ArrayList<>();
  private final AtomicInteger connections = new AtomicInteger();
  private final AtomicInteger fileRequests = new AtomicInteger();

  /** Starts listening; every file request names {@code requestedFile}. */
  RogueMySqlServer(String requestedFile) {
    this.requestedFile = requestedFile;
    try {
      this.socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    this.acceptor = new Thread(this::acceptLoop, "rogue-mysql");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  int port() {
    return socket.getLocalPort();
  }

  /** Logins seen so far. */
  int connections() {
    return connections.get();
  }

  /** LOCAL INFILE requests sent so far. */
  int fileRequests() {
    return fileRequests.get();
  }

  /** The text of every COM_QUERY received. */
  synchronized List<String> queries() {
    return List.copyOf(queries);
  }

  /** Every byte received from every client, in order. */
  synchronized byte[] received() {
    return received.toByteArray();
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }

  private void acceptLoop() {
    while (!socket.isClosed()) {
      try {
        Socket client = socket.accept();
        Thread handler = new Thread(() -> serve(client), "rogue-mysql-client");
        handler.setDaemon(true);
        handler.start();
      } catch (IOException e) {
        return;
      }
    }
  }

  private void serve(Socket client) {
    try (client) {
      client.setSoTimeout(20_000);
      InputStream in = client.getInputStream();
      OutputStream out = client.getOutputStream();
      write(out, 0, handshake());
      read(in); // the handshake response: any user, any password
      connections.incrementAndGet();
      write(out, 2, ok());
      while (true) {
        byte[] command = read(in).payload();
        if (command.length == 0 || command[0] == COM_QUIT) {
          return;
        }
        if (command[0] != COM_QUERY) {
          write(out, 1, ok());
          continue;
        }
        String sql = new String(command, 1, command.length - 1, StandardCharsets.UTF_8);
        synchronized (this) {
          queries.add(sql);
        }
        String statement = sql.replaceAll("^(\\s|/\\*.*?\\*/)*", "").toLowerCase(Locale.ROOT);
        if (statement.startsWith("set ")) {
          write(out, 1, ok());
          continue;
        }
        byte[] request = new byte[1 + requestedFile.length()];
        request[0] = (byte) 0xFB;
        System.arraycopy(
            requestedFile.getBytes(StandardCharsets.UTF_8), 0, request, 1, requestedFile.length());
        write(out, 1, request);
        fileRequests.incrementAndGet();
        // The file's packets (if any) end with an empty one; then the statement's result.
        Packet chunk;
        do {
          chunk = read(in);
        } while (chunk.payload().length > 0);
        write(out, chunk.sequence() + 1, ok());
      }
    } catch (EOFException | SocketException e) {
      // The client hung up, as a driver refusing the request may.
    } catch (IOException e) {
      // A test asserts on what was received, not on how the connection ended.
    }
  }

  private record Packet(int sequence, byte[] payload) {}

  private Packet read(InputStream in) throws IOException {
    byte[] header = in.readNBytes(4);
    record(header);
    if (header.length < 4) {
      throw new EOFException();
    }
    int length = (header[0] & 0xFF) | (header[1] & 0xFF) << 8 | (header[2] & 0xFF) << 16;
    byte[] payload = in.readNBytes(length);
    record(payload);
    if (payload.length < length) {
      throw new EOFException();
    }
    return new Packet(header[3] & 0xFF, payload);
  }

  private synchronized void record(byte[] bytes) {
    received.write(bytes, 0, bytes.length);
  }

  private static void write(OutputStream out, int sequence, byte[] payload) throws IOException {
    out.write(
        new byte[] {
          (byte) payload.length,
          (byte) (payload.length >> 8),
          (byte) (payload.length >> 16),
          (byte) sequence
        });
    out.write(payload);
    out.flush();
  }

  private static byte[] handshake() {
    ByteArrayOutputStream p = new ByteArrayOutputStream();
    p.write(10); // protocol version
    p.writeBytes("8.0.40-rogue\0".getBytes(StandardCharsets.US_ASCII));
    p.writeBytes(new byte[] {1, 0, 0, 0}); // connection id
    p.writeBytes("abcdefgh".getBytes(StandardCharsets.US_ASCII)); // scramble, part 1
    p.write(0);
    p.write(CAPABILITIES & 0xFF);
    p.write((CAPABILITIES >> 8) & 0xFF);
    p.write(45); // utf8mb4_general_ci
    p.writeBytes(new byte[] {2, 0}); // status: autocommit
    p.write((CAPABILITIES >> 16) & 0xFF);
    p.write((CAPABILITIES >> 24) & 0xFF);
    p.write(21); // scramble length
    p.writeBytes(new byte[10]);
    p.writeBytes("ijklmnopqrst\0".getBytes(StandardCharsets.US_ASCII)); // scramble, part 2
    p.writeBytes("mysql_native_password\0".getBytes(StandardCharsets.US_ASCII));
    return p.toByteArray();
  }

  private static byte[] ok() {
    // OK: 0 affected rows, no insert id, status autocommit, no warnings.
    return new byte[] {0, 0, 0, 2, 0, 0, 0};
  }
}
