package io.bloomoperator.source;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayInputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/** Newline-separated keys in one key of a ConfigMap (data or binaryData). */
public final class ConfigMapSource extends InClusterSource<ConfigMap> {

  private final KubernetesClient client;

  public ConfigMapSource(KubernetesClient client, String namespace, String name, String key) {
    super(namespace, "ConfigMap", name, key);
    this.client = client;
  }

  @Override
  ConfigMap get(String name) {
    return client.configMaps().inNamespace(namespace).withName(name).get();
  }

  @Override
  Reader content(ConfigMap configMap, String key) {
    if (configMap.getData() != null && configMap.getData().containsKey(key)) {
      return new StringReader(configMap.getData().get(key));
    }
    if (configMap.getBinaryData() != null && configMap.getBinaryData().containsKey(key)) {
      return new InputStreamReader(
          new ByteArrayInputStream(Base64.getDecoder().decode(configMap.getBinaryData().get(key))),
          StandardCharsets.UTF_8);
    }
    return null;
  }
}
