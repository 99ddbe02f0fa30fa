package io.bloomoperator.source;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayInputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/** Newline-separated keys in one key of a Secret. */
public final class SecretSource extends InClusterSource<Secret> {

  public SecretSource(KubernetesClient client, String namespace, String name, String key) {
    super(client, namespace, "Secret", name, key);
  }

  @Override
  Secret get(String name) {
    return client.secrets().inNamespace(namespace).withName(name).get();
  }

  @Override
  Reader content(Secret secret, String key) {
    if (secret.getData() == null || !secret.getData().containsKey(key)) {
      return null;
    }
    return new InputStreamReader(new ByteArrayInputStream(
        Base64.getDecoder().decode(secret.getData().get(key))), StandardCharsets.UTF_8);
  }
}
