package io.bloomoperator.faults;

import com.sun.management.UnixOperatingSystemMXBean;
import com.sun.tools.attach.VirtualMachine;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import javax.management.MBeanServerConnection;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * Resource figures of one JVM, read through its platform MXBeans: the test JVM's own, or another
 * process's through the attach API and its local JMX agent (no port, no flag on the target: the
 * operator runs exactly as packaged). The connection stays open for the probe's life, so its own
 * RMI thread and socket in the target are a constant, not a trend.
 */
final class JvmProbe implements AutoCloseable {

  /** One reading. {@code heapAfterGc}: heap used right after a full collection. */
  record Reading(long heapAfterGc, int threads, long openFiles, long sockets) {}

  private final long pid;
  private final JMXConnector connector;
  private final MemoryMXBean memory;
  private final ThreadMXBean threads;
  private final UnixOperatingSystemMXBean os;

  private JvmProbe(long pid, JMXConnector connector, MBeanServerConnection server)
      throws IOException {
    this.pid = pid;
    this.connector = connector;
    this.memory =
        ManagementFactory.newPlatformMXBeanProxy(
            server, ManagementFactory.MEMORY_MXBEAN_NAME, MemoryMXBean.class);
    this.threads =
        ManagementFactory.newPlatformMXBeanProxy(
            server, ManagementFactory.THREAD_MXBEAN_NAME, ThreadMXBean.class);
    this.os =
        ManagementFactory.newPlatformMXBeanProxy(
            server,
            ManagementFactory.OPERATING_SYSTEM_MXBEAN_NAME,
            UnixOperatingSystemMXBean.class);
  }

  /** The JVM this test runs in. */
  static JvmProbe self() throws IOException {
    return new JvmProbe(
        ProcessHandle.current().pid(), null, ManagementFactory.getPlatformMBeanServer());
  }

  /** Another JVM of this user, e.g. the operator process. */
  static JvmProbe attach(long pid) throws Exception {
    VirtualMachine vm = VirtualMachine.attach(Long.toString(pid));
    String address;
    try {
      address = vm.startLocalManagementAgent();
    } finally {
      vm.detach();
    }
    JMXConnector connector = JMXConnectorFactory.connect(new JMXServiceURL(address));
    return new JvmProbe(pid, connector, connector.getMBeanServerConnection());
  }

  /** Forces a full collection, then reads heap, threads and descriptors. */
  Reading read() throws IOException {
    memory.gc();
    return new Reading(
        memory.getHeapMemoryUsage().getUsed(),
        threads.getThreadCount(),
        os.getOpenFileDescriptorCount(),
        sockets());
  }

  /** Threads started since the JVM started (executors replace idle threads: this only grows). */
  long threadsStarted() {
    return threads.getTotalStartedThreadCount();
  }

  /** Open socket descriptors: every TCP connection, listener and selector pipe of the process. */
  private long sockets() throws IOException {
    try (Stream<Path> fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
      return fds.filter(JvmProbe::isSocket).count();
    }
  }

  private static boolean isSocket(Path fd) {
    try {
      return Files.readSymbolicLink(fd).toString().startsWith("socket:");
    } catch (IOException e) {
      return false; // closed between the listing and the read
    }
  }

  @Override
  public void close() throws IOException {
    if (connector != null) {
      connector.close();
    }
  }
}
