package io.bloomoperator.changes;

import io.bloomoperator.source.EgressPolicy;
import java.net.InetAddress;
import java.security.Permission;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Checks every connection a client library makes against an {@link EgressPolicy}, where the library
 * offers no socket factory or resolver of its own to do it with.
 *
 * <p>The Kafka client connects to whatever addresses the cluster's metadata advertises, not only to
 * the bootstrap servers a BloomFilter names: a broker (or anyone who controls one) could advertise
 * the cloud metadata endpoint or the operator's own port. The client has no hook for its sockets or
 * its DNS look-ups, and Java 17, which the image runs, has no resolver SPI (that came with Java
 * 18). What Java 17 does have is the {@link SecurityManager}: every {@code SocketChannel.connect}
 * calls {@link SecurityManager#checkConnect(String, int)} with the resolved address on the
 * connecting thread, before a packet is sent. So this class installs, once and only when a guarded
 * call is first made, a security manager that grants every permission (it changes nothing else in
 * the JVM) but refuses connections of guarded threads to addresses the policy refuses.
 *
 * <p>A thread is guarded while it runs {@link #call}, and so is every thread it starts meanwhile
 * (the guard is an {@link InheritableThreadLocal}): the Kafka admin client's network thread is
 * started when the admin client is created, inside the guarded call, and stays guarded for its
 * whole life. A refused connection fails inside the client with a {@link SecurityException}, which
 * the caller sees as a failed call; {@link Guard#refused()} counts them.
 *
 * <p>Limits, said where users read them (docs/changes.md): the security manager exists up to Java
 * 23, and from Java 18 on only when the JVM is started with {@code -Djava.security.manager=allow};
 * where it cannot be installed, {@link #available()} is false and change streams are refused rather
 * than run unchecked. A host-name rule of the policy is applied when the name is resolved; the
 * connection itself is judged by its address, so a name-based allow rule cannot admit an address
 * the defaults deny (use a CIDR).
 */
public final class ConnectGuard {

  /** The policy of the guarded thread, with its refusal count; null on other threads. */
  private static final InheritableThreadLocal<Guard> GUARD = new InheritableThreadLocal<>();

  private static volatile Boolean installed;

  private ConnectGuard() {}

  /** What a guarded call is held to, and how many connections it was refused. */
  public static final class Guard {
    private final EgressPolicy policy;
    private final AtomicLong refused = new AtomicLong();
    private volatile EgressPolicy.Refusal lastRefusal;

    public Guard(EgressPolicy policy) {
      this.policy = policy;
    }

    /** Connections (and look-ups) refused so far, on every thread this guard covers. */
    public long refused() {
      return refused.get();
    }

    /** Why the last connection was refused, if one was; the text is fixed and safe to show. */
    public Optional<EgressPolicy.Refusal> lastRefusal() {
      return Optional.ofNullable(lastRefusal);
    }

    void refuse(EgressPolicy.Refusal why) {
      refused.incrementAndGet();
      lastRefusal = why;
      throw new SecurityException(
          "connection refused by the operator's egress policy: " + why.text());
    }
  }

  /**
   * Whether guarded calls can be made in this JVM: installs the checking security manager the first
   * time. False on a JVM that refuses one (Java 18 to 23 without {@code
   * -Djava.security.manager=allow}, Java 24 and later) or that already has another.
   */
  public static boolean available() {
    Boolean known = installed;
    if (known != null) {
      return known;
    }
    synchronized (ConnectGuard.class) {
      if (installed == null) {
        installed = install();
      }
      return installed;
    }
  }

  @SuppressWarnings("removal")
  private static boolean install() {
    SecurityManager present = System.getSecurityManager();
    if (present != null) {
      return present instanceof Checking;
    }
    try {
      System.setSecurityManager(new Checking());
      return true;
    } catch (UnsupportedOperationException | SecurityException e) {
      return false;
    }
  }

  /**
   * Runs {@code call} with this thread, and every thread it starts, held to {@code guard}.
   *
   * @throws IllegalStateException when {@link #available()} is false: nothing is run unchecked
   */
  public static <T> T call(Guard guard, Callable<T> call) throws Exception {
    if (!available()) {
      throw new IllegalStateException(
          "connections cannot be checked in this JVM (it refuses a security manager)");
    }
    Guard before = GUARD.get();
    GUARD.set(guard);
    try {
      return call.call();
    } finally {
      if (before == null) {
        GUARD.remove();
      } else {
        GUARD.set(before);
      }
    }
  }

  /** Whether the calling thread is guarded (for tests and assertions). */
  static boolean guarded() {
    return GUARD.get() != null;
  }

  /**
   * Grants everything, as if there were no security manager, except connections of guarded threads
   * the policy refuses.
   */
  @SuppressWarnings("removal")
  private static final class Checking extends SecurityManager {

    @Override
    public void checkPermission(Permission perm) {}

    @Override
    public void checkPermission(Permission perm, Object context) {}

    @Override
    public void checkConnect(String host, int port) {
      Guard guard = GUARD.get();
      if (guard != null) {
        check(guard, host, port);
      }
    }

    @Override
    public void checkConnect(String host, int port, Object context) {
      checkConnect(host, port);
    }

    private static void check(Guard guard, String host, int port) {
      Optional<InetAddress> address = EgressPolicy.literalAddress(host);
      if (address.isPresent()) {
        // A connection (or a look-up of a literal): judged by its address.
        Optional<EgressPolicy.Refusal> refusal = guard.policy.check(host, address.get());
        if (refusal.isPresent()) {
          guard.refuse(refusal.get());
        }
      } else if (port == -1) {
        // A name being resolved: its deny rules apply now, its addresses when connected to.
        Optional<EgressPolicy.Refusal> refusal = guard.policy.checkName(host);
        if (refusal.isPresent()) {
          guard.refuse(refusal.get());
        }
      } else {
        // A connection reported by name only: never expected from the JDK's sockets; refuse
        // rather than let an unresolved name through.
        guard.refuse(EgressPolicy.Refusal.NOT_AN_ADDRESS);
      }
    }
  }
}
