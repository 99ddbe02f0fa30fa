package io.bloomoperator.source;

import io.fabric8.kubernetes.api.model.Secret;
import java.io.ByteArrayInputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * Newline-separated keys in one key of a Secret. The Secret must allow the filter ({@link
 * SecretAccess}): its lines end up in a snapshot that every reader of the namespace's ConfigMaps
 * can query.
 */
public final class SecretSource extends InClusterSource<Secret> {

  private final SecretAccess secrets;

  public SecretSource(SecretAccess secrets, String name, String key) {
    super(secrets.namespace(), "Secret", name, key);
    this.secrets = secrets;
  }

  @Override
  Secret get(String name) throws SourceException {
    return secrets.forPublishing(name, "source.secret");
  }

  @Override
  Reader content(Secret secret, String key) {
    if (secret.getData() == null || !secret.getData().containsKey(key)) {
      return null;
    }
    return new InputStreamReader(
        new ByteArrayInputStream(Base64.getDecoder().decode(secret.getData().get(key))),
        StandardCharsets.UTF_8);
  }
}
