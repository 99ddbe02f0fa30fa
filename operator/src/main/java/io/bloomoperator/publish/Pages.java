package io.bloomoperator.publish;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.client.dsl.FilterWatchListDeletable;
import java.util.function.Consumer;

/**
 * Lists in pages of a few objects. Whoever may create ConfigMaps in a namespace may create hundreds
 * of 1 MB ones carrying the operator's labels; a plain list would hold them all in memory at once.
 */
final class Pages {

  private Pages() {}

  /** Hands each listed object to {@code each}, holding at most {@code pageSize} at a time. */
  static <T extends HasMetadata, L extends KubernetesResourceList<T>> void forEach(
      FilterWatchListDeletable<T, L, ?> query, long pageSize, Consumer<T> each) {
    String next = null;
    do {
      L page = query.list(new ListOptionsBuilder().withLimit(pageSize).withContinue(next).build());
      page.getItems().forEach(each);
      next = page.getMetadata() == null ? null : page.getMetadata().getContinue();
    } while (next != null && !next.isEmpty());
  }
}
