package io.bloomoperator.objectstore;

import io.bloomoperator.source.EgressCheckedDns;
import java.net.InetAddress;

/**
 * Resolves the host name of a store's endpoint to the addresses a connection may go to: the
 * resolver behind the stores' {@link EgressCheckedDns}, under the name the store settings and the
 * test harness have always used.
 */
@FunctionalInterface
public interface StoreResolver extends EgressCheckedDns.Lookup {

  /** The JVM's resolver. */
  StoreResolver SYSTEM = InetAddress::getAllByName;
}
