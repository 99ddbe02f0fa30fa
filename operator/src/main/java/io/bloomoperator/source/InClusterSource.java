package io.bloomoperator.source;

import io.bloomoperator.api.Reasons;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.Reader;

/**
 * Keys in one data key of an object in the filter's namespace. The object's resourceVersion is the
 * change token, so an unchanged object is never rebuilt.
 */
abstract class InClusterSource<T extends HasMetadata> implements KeySource {

  protected final String namespace;
  private final String kind;
  private final String name;
  private final String key;

  InClusterSource(String namespace, String kind, String name, String key) {
    this.namespace = namespace;
    this.kind = kind;
    this.name = name;
    this.key = key;
  }

  /** The object, or null when it does not exist. */
  abstract T get(String name) throws SourceException;

  /** The text under {@code key}, or null when the object has no such key. */
  abstract Reader content(T object, String key);

  @Override
  public String description() {
    return kind + " " + name + " key " + key;
  }

  @Override
  public String changeToken() throws SourceException {
    return kind + ":" + fetch().getMetadata().getResourceVersion();
  }

  @Override
  public void readKeys(KeySink sink) throws SourceException {
    Reader text = content(fetch(), key);
    if (text == null) {
      throw new SourceException(
          Reasons.SOURCE_KEY_NOT_FOUND, kind + " " + name + " has no key " + key);
    }
    TextKeys.stream(text, sink, description());
  }

  private T fetch() throws SourceException {
    T object;
    try {
      object = get(name);
    } catch (KubernetesClientException e) {
      throw new SourceException(
          Reasons.SOURCE_UNREADABLE, "cannot read " + kind + " " + name + ": " + e.getMessage(), e);
    }
    if (object == null) {
      throw new SourceException(
          Reasons.SOURCE_NOT_FOUND, kind + " " + name + " not found in namespace " + namespace);
    }
    return object;
  }
}
