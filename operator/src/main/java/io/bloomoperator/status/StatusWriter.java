package io.bloomoperator.status;

import com.fasterxml.jackson.core.type.TypeReference;
import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.BloomFilterStatus;
import io.bloomoperator.publish.StatusBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes a BloomFilter's whole status as a JSON merge patch of the status subresource. Every field
 * the reconciler knows is sent, so values written meanwhile (build progress) are overwritten rather
 * than diffed away, and fields it does not know are left alone instead of deleted.
 *
 * <p>Every write is charged to the etcd write budget at the size of the whole object ({@link
 * StatusBudget}): what reports an outcome is always written and charged afterwards; progress is
 * sent only when the budget has room ({@link #patchIfRoom}).
 */
public final class StatusWriter {

  private StatusWriter() {}

  /** Fields a merge patch must name as null to remove: they are absent when nothing applies. */
  private static final List<String> CLEARABLE = List.of("held", "pinnedVersion", "canary");

  /**
   * Writes {@code status} whole, and charges it.
   *
   * @return the BloomFilter as the API server answered the write (its resourceVersion and status)
   */
  public static BloomFilter write(
      KubernetesClient client,
      StatusBudget budget,
      BloomFilter filter,
      BloomFilterStatus status,
      Instant now) {
    return patch(client, budget, filter, wholeStatus(status), now);
  }

  /** Writes {@code status} whole, already charged ({@link StatusBudget#deferrable}). */
  public static BloomFilter writePrepaid(
      KubernetesClient client, BloomFilter filter, BloomFilterStatus status) {
    return send(client, filter, wholeStatus(status));
  }

  private static Map<String, Object> wholeStatus(BloomFilterStatus status) {
    Map<String, Object> fields =
        new HashMap<>(
            Serialization.jsonMapper()
                .convertValue(status, new TypeReference<Map<String, Object>>() {}));
    CLEARABLE.forEach(field -> fields.putIfAbsent(field, null));
    return fields;
  }

  /**
   * Merges {@code fields} (a status, or a map of some of its fields) into the status, and charges
   * it: a merge patch cannot clobber the fields it does not name.
   *
   * @return the BloomFilter as the API server answered the patch
   */
  public static BloomFilter patch(
      KubernetesClient client,
      StatusBudget budget,
      BloomFilter filter,
      Object fields,
      Instant now) {
    BloomFilter answer = send(client, filter, fields);
    budget.written(filter, answer, now);
    return answer;
  }

  /**
   * Merges {@code fields} into the status if the budget has room for a write that can wait ({@link
   * StatusBudget#deferrable}).
   *
   * @return whether it was sent
   */
  public static boolean patchIfRoom(
      KubernetesClient client,
      StatusBudget budget,
      BloomFilter filter,
      Object fields,
      Instant now) {
    if (!budget.deferrable(filter, now)) {
      return false;
    }
    send(client, filter, fields);
    return true;
  }

  private static BloomFilter send(KubernetesClient client, BloomFilter filter, Object fields) {
    return client
        .resources(BloomFilter.class)
        .inNamespace(filter.getMetadata().getNamespace())
        .withName(filter.getMetadata().getName())
        .subresource("status")
        .patch(
            PatchContext.of(PatchType.JSON_MERGE), Serialization.asJson(Map.of("status", fields)));
  }
}
