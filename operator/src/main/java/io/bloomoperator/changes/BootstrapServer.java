package io.bloomoperator.changes;

/**
 * One entry of {@code spec.changes.kafka.bootstrapServers}, {@code host:port}, with an IPv6 host's
 * brackets removed: the one place the entries are taken apart, for the egress check and for the
 * hosts a Secret must allow.
 */
record BootstrapServer(String host, int port) {

  /**
   * @throws StreamException of kind REFUSED when {@code text} is not {@code host:port} (the schema
   *     refuses such entries; a resource that slipped past it gets a message, not a crash)
   */
  static BootstrapServer parse(String text) throws StreamException {
    int colon = text == null ? -1 : text.lastIndexOf(':');
    int port = -1;
    if (colon > 0) {
      try {
        port = Integer.parseInt(text.substring(colon + 1));
      } catch (NumberFormatException e) {
        port = -1;
      }
    }
    if (port < 1 || port > 65535) {
      throw new StreamException(
          StreamException.Kind.REFUSED,
          "a bootstrap server of spec.changes.kafka is not host:port with a port of 1 to 65535");
    }
    String host = text.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    return new BootstrapServer(host, port);
  }
}
