package io.bloomoperator.testing;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A client of the shared cluster that records the path of every request it sends, so a test can
 * prove that something was never fetched.
 */
public final class RequestLog {

  private final List<String> paths = new CopyOnWriteArrayList<>();

  /** A new client recording into this log; the caller closes it. */
  public KubernetesClient newClient(KubeCluster cluster) {
    return new KubernetesClientBuilder()
        .withConfig(cluster.clientConfig())
        .withHttpClientBuilderConsumer(
            builder ->
                builder.addOrReplaceInterceptor(
                    "request-log",
                    new Interceptor() {
                      @Override
                      public void before(
                          BasicBuilder request, HttpRequest original, RequestTags tags) {
                        paths.add(original.method() + " " + original.uri().getPath());
                      }
                    }))
        .build();
  }

  /** Whether any request went to a path ending with {@code suffix}. */
  public boolean anyPathEndsWith(String suffix) {
    return paths.stream().anyMatch(path -> path.endsWith(suffix));
  }

  /** Every path requested so far, e.g. {@code GET /api/v1/namespaces/ns/configmaps/x}. */
  public List<String> paths() {
    return List.copyOf(paths);
  }
}
