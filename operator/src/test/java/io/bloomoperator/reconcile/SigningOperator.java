package io.bloomoperator.reconcile;

import io.bloomoperator.publish.SigningKeySecret;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.Ed25519Keys;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.util.Base64;
import java.util.Map;

/** In-process operators that sign every manifest, for tests of what signing protects. */
final class SigningOperator {

  private SigningOperator() {}

  /**
   * An operator with the default settings that signs with {@code key}, kept in the Secret {@code
   * secret} names (its namespace is created before the operator starts and deleted after).
   */
  static InProcessOperator signingWith(SigningKeySecret secret, KeyPair key) {
    return InProcessOperator.withSettings(OperatorSettings.builder().signingKey(secret).build())
        .beforeStart(
            client -> {
              client
                  .namespaces()
                  .resource(
                      new NamespaceBuilder()
                          .withNewMetadata()
                          .withName(secret.namespace())
                          .endMetadata()
                          .build())
                  .create();
              client
                  .secrets()
                  .inNamespace(secret.namespace())
                  .resource(
                      new SecretBuilder()
                          .withNewMetadata()
                          .withName(secret.name())
                          .endMetadata()
                          .withData(
                              Map.of(
                                  SigningKeySecret.KEY,
                                  Base64.getEncoder()
                                      .encodeToString(
                                          Ed25519Keys.toPem(key.getPrivate())
                                              .getBytes(StandardCharsets.US_ASCII))))
                          .build())
                  .create();
            })
        .afterStop(client -> client.namespaces().withName(secret.namespace()).delete());
  }
}
