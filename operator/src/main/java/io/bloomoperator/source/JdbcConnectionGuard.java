package io.bloomoperator.source;

import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.sql.SQLException;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What every socket a JDBC driver opens for one read must obey: connect only where the egress
 * policy allows, and read at most {@code batchBytes} from the server between two {@link
 * #newFetch()} calls. Drivers create their sockets themselves, through the socket factory the
 * operator names in the connection properties ({@link GuardedSocketFactory}, {@link
 * GuardedMySqlSocketFactory}); those factories find the guard of the read on the thread that
 * creates them ({@link #call}).
 *
 * <p><b>Why at the socket.</b> The address is checked where the connection is made, on the address
 * actually connected to, after every name resolution the driver does: a DNS answer that changes
 * between a check and the connection (rebinding), a host name resolving to several addresses, a
 * cancel request on a second connection, all pass through here. A socket created while no guard is
 * bound refuses to connect (fail closed).
 *
 * <p><b>Why count bytes.</b> Not every driver bounds what it buffers (MariaDB Connector/J reads
 * {@code fetchSize} rows of any size): counting the bytes read from the server (TLS included, so
 * about the bytes of the rows) bounds the memory of one fetch whatever the driver does with them.
 */
final class JdbcConnectionGuard {

  private static final ThreadLocal<JdbcConnectionGuard> CURRENT = new ThreadLocal<>();

  /** Guards by token, for drivers that connect on a thread of their own (see {@link #token()}). */
  private static final Map<String, JdbcConnectionGuard> BY_TOKEN = new ConcurrentHashMap<>();

  private final String token = UUID.randomUUID().toString();

  private final EgressPolicy policy;
  private final String host;
  private final long batchBytes;
  private volatile long remaining;
  private volatile EgressPolicy.Refusal refusal;
  private volatile boolean batchExceeded;

  /** PostgreSQL messages larger than this are refused (0: not parsed); see {@link PgFrameBound}. */
  private final long frameLimit;

  private final boolean sslRequested;

  /** This guard's sockets not closed yet, for {@link #abortSockets}. */
  private final java.util.Set<Socket> sockets = ConcurrentHashMap.newKeySet();

  private volatile boolean aborted;

  /**
   * @param host the host as the URL names it, for the policy's host name rules
   */
  JdbcConnectionGuard(EgressPolicy policy, String host, long batchBytes) {
    this(policy, host, batchBytes, 0, false);
  }

  /**
   * A guard whose sockets also refuse any PostgreSQL message announcing more than {@code
   * frameLimit} bytes ({@link PgFrameBound}): for replication connections, whose messages PgJDBC
   * allocates whole.
   *
   * @param sslRequested whether the driver asks for TLS first (its one-byte answer is no message)
   */
  JdbcConnectionGuard(
      EgressPolicy policy, String host, long batchBytes, long frameLimit, boolean sslRequested) {
    this.policy = policy;
    this.host = host;
    this.batchBytes = batchBytes;
    this.remaining = batchBytes;
    this.frameLimit = frameLimit;
    this.sslRequested = sslRequested;
  }

  /** A JDBC call with this guard bound to the current thread. */
  @FunctionalInterface
  interface SqlCall<T> {
    T run() throws SQLException;
  }

  /** Runs {@code call} with this guard bound to the current thread. */
  <T> T call(SqlCall<T> call) throws SQLException {
    JdbcConnectionGuard previous = CURRENT.get();
    CURRENT.set(this);
    try {
      return call.run();
    } finally {
      if (previous == null) {
        CURRENT.remove();
      } else {
        CURRENT.set(previous);
      }
    }
  }

  /** The guard bound to this thread, or null. */
  static JdbcConnectionGuard current() {
    return CURRENT.get();
  }

  /**
   * A name for this guard that a socket factory can be given as text (PgJDBC's {@code
   * socketFactoryArg}), for drivers that connect on a thread of their own (PgJDBC does, to apply
   * its login timeout), where {@link #current()} finds nothing. Valid until {@link #close()}.
   */
  String token() {
    BY_TOKEN.put(token, this);
    return token;
  }

  /** The guard named {@code token}, or null when there is none (any more). */
  static JdbcConnectionGuard byToken(String token) {
    return token == null ? null : BY_TOKEN.get(token);
  }

  /** Ends {@link #token()}; sockets already created keep obeying this guard. */
  void close() {
    BY_TOKEN.remove(token);
  }

  /**
   * Closes every socket of this guard now, from any thread, and refuses to connect any made after:
   * a connect, login or read blocked on a server that stopped answering ends at once (with an
   * exception on the blocked thread) instead of at its own timeout.
   */
  void abortSockets() {
    aborted = true;
    for (Socket socket : sockets) {
      try {
        socket.close();
      } catch (IOException | RuntimeException ignored) {
        // Closed either way, or closing already.
      }
    }
  }

  /** Starts a new fetch: the server may send {@code batchBytes} again. */
  void newFetch() {
    remaining = batchBytes;
  }

  /** Why a connection was refused, or null when none was. */
  EgressPolicy.Refusal refusal() {
    return refusal;
  }

  /** Whether a fetch brought more than {@code batchBytes}. */
  boolean batchExceeded() {
    return batchExceeded;
  }

  long batchBytes() {
    return batchBytes;
  }

  /** A new unconnected socket obeying {@code guard}; one with a null guard never connects. */
  static Socket socket(JdbcConnectionGuard guard) {
    return new GuardedSocket(guard);
  }

  /** Checks the address about to be connected to; the address to connect to instead of a name. */
  private InetSocketAddress check(SocketAddress endpoint) throws IOException {
    if (!(endpoint instanceof InetSocketAddress target)) {
      throw new SocketException("only TCP connections are allowed");
    }
    // Resolved once, here: the address checked is the address connected to.
    InetAddress address =
        target.isUnresolved() ? InetAddress.getByName(target.getHostString()) : target.getAddress();
    Optional<EgressPolicy.Refusal> refused = policy.check(host, address);
    if (refused.isPresent()) {
      refusal = refused.get();
      throw new ConnectException("address refused by the operator's egress policy");
    }
    return new InetSocketAddress(address, target.getPort());
  }

  private int allowance(int wanted) {
    // One byte more than allowed is asked for, so that a fetch exactly at the limit passes and one
    // over it is noticed without reading (and holding) more.
    return (int) Math.max(0, Math.min(wanted, remaining + 1));
  }

  private void spend(int read) throws IOException {
    if (read > 0) {
      remaining -= read;
      if (remaining < 0) {
        batchExceeded = true;
        throw new IOException("the server sent more than the operator's limit for one fetch");
      }
    }
  }

  /** A plain TCP socket that connects only where the guard allows and counts what it reads. */
  private static final class GuardedSocket extends Socket {
    private final JdbcConnectionGuard guard;
    private InputStream input;

    GuardedSocket(JdbcConnectionGuard guard) {
      this.guard = guard;
      if (guard != null) {
        guard.sockets.add(this);
      }
    }

    @Override
    public void connect(SocketAddress endpoint, int timeout) throws IOException {
      if (guard == null) {
        throw new ConnectException("no egress check is bound to this connection");
      }
      if (guard.aborted) {
        throw new SocketException("the connection's deadline passed");
      }
      super.connect(guard.check(endpoint), timeout);
    }

    @Override
    public synchronized void close() throws IOException {
      try {
        super.close();
      } finally {
        if (guard != null) {
          guard.sockets.remove(this);
        }
      }
    }

    /** One stream per socket: the message parser's state must survive a second call. */
    @Override
    public synchronized InputStream getInputStream() throws IOException {
      if (input == null) {
        InputStream counted = new CountingInput(super.getInputStream(), guard);
        input =
            guard != null && guard.frameLimit > 0
                ? new PgFrameBound(counted, guard.frameLimit, guard.sslRequested)
                : counted;
      }
      return input;
    }
  }

  private static final class CountingInput extends FilterInputStream {
    private static final int SKIP_BUFFER = 8192;

    private final JdbcConnectionGuard guard;

    CountingInput(InputStream in, JdbcConnectionGuard guard) {
      super(in);
      this.guard = guard;
    }

    @Override
    public int read() throws IOException {
      int b = super.read();
      guard.spend(b < 0 ? 0 : 1);
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (len == 0) {
        return 0;
      }
      int n = super.read(b, off, Math.max(1, guard.allowance(len)));
      guard.spend(n);
      return n;
    }

    /**
     * Skips by reading, so that skipped bytes count and the end of the stream is an error: PgJDBC
     * skips a field it could not allocate in a loop until {@code skip} has covered it, and a stream
     * that returns 0 at its end (as {@link InputStream#skip} does) would keep it spinning forever,
     * watchdog or not.
     */
    @Override
    public long skip(long n) throws IOException {
      if (n <= 0) {
        return 0;
      }
      byte[] discard = new byte[(int) Math.min(n, SKIP_BUFFER)];
      int read = read(discard, 0, discard.length);
      if (read < 0) {
        throw new EOFException("the server closed the connection");
      }
      return read;
    }
  }
}
