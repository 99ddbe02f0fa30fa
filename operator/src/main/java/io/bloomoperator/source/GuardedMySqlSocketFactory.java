package io.bloomoperator.source;

import com.mysql.cj.conf.PropertySet;
import com.mysql.cj.protocol.StandardSocketFactory;
import java.net.Socket;

/**
 * The socket factory MySQL Connector/J is told to use (connection property {@code socketFactory},
 * which the URL allowlist keeps users from setting): Connector/J's own factory, resolving and
 * trying each address of the host, with sockets that obey the {@link JdbcConnectionGuard} bound to
 * the thread that created the factory (one factory per connection, created on the connecting
 * thread).
 */
public final class GuardedMySqlSocketFactory extends StandardSocketFactory {

  private final JdbcConnectionGuard guard = JdbcConnectionGuard.current();

  /** Called by the driver, by reflection. */
  public GuardedMySqlSocketFactory() {}

  @Override
  protected Socket createSocket(PropertySet props) {
    return JdbcConnectionGuard.socket(guard);
  }
}
