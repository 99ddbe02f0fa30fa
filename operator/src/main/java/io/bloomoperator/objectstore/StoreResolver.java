package io.bloomoperator.objectstore;

import java.net.InetAddress;
import java.net.UnknownHostException;

/** Resolves the host name of a store's endpoint to the addresses a connection may go to. */
@FunctionalInterface
public interface StoreResolver {

  /** The JVM's resolver. */
  StoreResolver SYSTEM = InetAddress::getAllByName;

  /**
   * Every address of {@code host}.
   *
   * @throws UnknownHostException if it has none
   */
  InetAddress[] resolve(String host) throws UnknownHostException;
}
