package io.bloomoperator.testing.operator;

import io.bloomoperator.objectstore.StoreResolver;
import io.bloomoperator.objectstore.StoreSettings;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.testing.servers.S3Server;
import java.util.HashMap;
import java.util.Map;

/**
 * The in-process operators the tests share. {@link #withStore} is the operator of the object-store
 * tests: its sources may reach loopback (where the tests' HTTP sources listen), it reads the
 * stores' credentials in an operator namespace of the test's own, and the write credentials of the
 * test's S3 server are there ({@link TestStores#CREDENTIALS}) before it starts:
 *
 * <pre>{@code
 * @RegisterExtension
 * @Order(1)
 * static final InProcessOperator OPERATOR =
 *     TestOperators.withStore(SERVER, OPERATOR_NAMESPACE)
 *         .setting("BLOOM_MIN_PUBLISH_INTERVAL", "0")
 *         .build();
 * }</pre>
 *
 * <p>A test varies the operator as an administrator does, by its environment ({@link
 * Builder#setting}): the settings are built from it in {@link Builder#build} only.
 */
public final class TestOperators {

  /** The tests' servers listen on loopback, which the default egress policy refuses. */
  public static final String LOOPBACK = "127.0.0.1/32";

  private TestOperators() {}

  /**
   * The operator of the object-store tests, writing to {@code server} with credentials read from
   * {@code operatorNamespace}: one a test class of its own, so that classes do not share Secrets.
   */
  public static Builder withStore(S3Server server, String operatorNamespace) {
    return new Builder(server, operatorNamespace);
  }

  /** An operator with stores, before it is built. */
  public static final class Builder {
    private final S3Server server;
    private final String operatorNamespace;
    private final Map<String, String> environment = new HashMap<>();
    private StoreResolver resolver;

    private Builder(S3Server server, String operatorNamespace) {
      this.server = server;
      this.operatorNamespace = operatorNamespace;
      // As deployed: one list for http and jdbc sources (no store test has a jdbc source).
      environment.put("BLOOM_HTTP_ALLOW", LOOPBACK);
    }

    /**
     * Environment variable {@code name} of the operator (e.g. BLOOM_MIN_PUBLISH_INTERVAL,
     * BLOOM_STORE_CLEANUP_TIMEOUT), read as the deployed operator reads its own; replaces the
     * loopback BLOOM_HTTP_ALLOW of these operators.
     */
    public Builder setting(String name, String value) {
      environment.put(name, value);
      return this;
    }

    /** Without environment variable {@code name}: BLOOM_HTTP_ALLOW for the default policy. */
    public Builder unset(String name) {
      environment.remove(name);
      return this;
    }

    /** Resolves store host names with {@code resolver} instead of the system's DNS. */
    public Builder resolver(StoreResolver resolver) {
      this.resolver = resolver;
      return this;
    }

    /**
     * The operator, to register on a static field; more (a request log, reader settings, what to
     * create before it starts) is added to it as to any {@link InProcessOperator}.
     */
    public InProcessOperator build() {
      // BLOOM_OPERATOR_NAMESPACE stays out of the environment: the signing key would be read there.
      StoreSettings stores =
          StoreSettings.fromEnvironment(environment).inNamespace(operatorNamespace);
      if (resolver != null) {
        stores = stores.withResolver(resolver);
      }
      return InProcessOperator.withSettings(OperatorSettings.fromEnvironment(environment))
          .withStores(stores)
          .beforeStart(client -> TestStores.writerCredentials(client, operatorNamespace, server));
    }
  }
}
