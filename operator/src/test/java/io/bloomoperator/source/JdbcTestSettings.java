package io.bloomoperator.source;

import io.bloomoperator.settings.OperatorSettings;

/** Settings for jdbc sources against the test servers, which listen on loopback. */
public final class JdbcTestSettings {

  /**
   * The default limits, with loopback admitted as an administrator would with {@code
   * BLOOM_HTTP_ALLOW=127.0.0.0/8,::1}: the operator refuses loopback by default.
   */
  public static final JdbcSourceSettings LOOPBACK =
      JdbcSourceSettings.defaults().withEgress(EgressPolicy.of("127.0.0.0/8, ::1", null));

  /** The operator's defaults with {@link #LOOPBACK} for jdbc sources. */
  public static OperatorSettings operator() {
    return OperatorSettings.builder().jdbc(LOOPBACK).build();
  }

  /** A jdbc source of {@code spec} under {@link #LOOPBACK}, logging in as {@code user}. */
  public static JdbcSource source(
      io.bloomoperator.api.JdbcSourceSpec spec, String user, String password) {
    return new JdbcSource(spec, LOOPBACK, () -> new JdbcCredentials(user, password));
  }

  private JdbcTestSettings() {}
}
