package io.bloomoperator.changes;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.ChangesSpec;
import io.bloomoperator.api.JdbcSourceSpec;
import io.bloomoperator.api.PostgresLogicalChangesSpec;
import io.bloomoperator.api.StreamStatus;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.source.EgressPolicy;
import io.bloomoperator.source.JdbcSourceSettings;
import io.bloomoperator.source.PostgresConnector;
import io.bloomoperator.source.SecretAccess;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The change streams this operator has open, one per filter with {@code spec.changes}, within
 * {@link StreamLimits#streamsPerNamespace()} per namespace and {@link StreamLimits#streams()} in
 * all: a stream holds connections (and the admin client a thread), so one namespace cannot take
 * them all. A stream is reopened when its spec changes and closed when the filter goes.
 */
public final class ChangeStreams implements AutoCloseable {

  /** Opens a filter's stream; Kafka or PostgreSQL in production, others in tests. */
  @FunctionalInterface
  public interface Opener {
    /**
     * @param secrets the filter's namespace's Secrets, as its source reads them (null in tests)
     */
    ChangeStream open(BloomFilter filter, KeyType keyType, String clientId, SecretAccess secrets)
        throws StreamException;
  }

  private record Open(String namespace, String specText, ChangeStream stream) {}

  private final StreamLimits limits;
  private final Opener opener;
  private final Map<String, Open> byUid = new HashMap<>();
  private final StreamReads reads;

  public ChangeStreams(StreamLimits limits, Opener opener) {
    this.limits = limits;
    this.opener = opener;
    this.reads = new StreamReads(limits);
  }

  /** Kafka streams, connecting where {@code egress} allows. */
  public static ChangeStreams kafka(StreamLimits limits, EgressPolicy egress) {
    return new ChangeStreams(
        limits,
        (filter, keyType, clientId, secrets) ->
            new KafkaChangeStream(
                filter.getSpec().getChanges().getKafka(),
                keyType,
                limits,
                egress,
                clientId,
                secrets));
  }

  /**
   * Kafka streams connecting where {@code egress} allows, and PostgreSQL logical replication on the
   * filter's jdbc source where {@code jdbc} allows its connections (the source's own policy).
   */
  public static ChangeStreams of(
      StreamLimits limits, EgressPolicy egress, JdbcSourceSettings jdbc) {
    return new ChangeStreams(
        limits,
        (filter, keyType, clientId, secrets) -> {
          ChangesSpec spec = filter.getSpec().getChanges();
          if (spec.getPostgresLogical() != null) {
            return postgres(filter, spec.getPostgresLogical(), keyType, limits, jdbc, secrets);
          }
          return new KafkaChangeStream(spec.getKafka(), keyType, limits, egress, clientId, secrets);
        });
  }

  /**
   * The PostgreSQL stream of {@code spec} on {@code filter}'s jdbc source, knowing the slot its
   * status records; nothing is connected yet.
   */
  public static PostgresLogicalStream postgres(
      BloomFilter filter,
      PostgresLogicalChangesSpec spec,
      KeyType keyType,
      StreamLimits limits,
      JdbcSourceSettings jdbc,
      SecretAccess secrets)
      throws StreamException {
    JdbcSourceSpec source =
        filter.getSpec().getSource() == null ? null : filter.getSpec().getSource().getJdbc();
    if (source == null || source.getUrl() == null) {
      throw new StreamException(
          StreamException.Kind.REFUSED, "spec.changes.postgresLogical needs a jdbc source");
    }
    PostgresConnector connector;
    try {
      connector = PostgresConnector.of(secrets, source, jdbc);
    } catch (IllegalArgumentException e) {
      throw new StreamException(StreamException.Kind.REFUSED, e.getMessage());
    }
    StreamStatus status = filter.getStatus() == null ? null : filter.getStatus().getStream();
    String recorded = status == null ? null : status.getSlot();
    return new PostgresLogicalStream(
        spec,
        keyType,
        limits,
        connector,
        recorded != null && recorded.endsWith("/" + spec.getSlot()) ? recorded : null,
        SlotIntent.of(slotRecords(limits), filter.getMetadata().getUid()));
  }

  /** Where the slots the operator is about to create are recorded: the pod's stream directory. */
  static java.nio.file.Path slotRecords(StreamLimits limits) {
    return limits.heldDir() == null ? null : limits.heldDir().resolve("slots");
  }

  /** The limits every stream is read within. */
  public StreamLimits limits() {
    return limits;
  }

  /** The backoff, read places and read heap every stream is read within. */
  public StreamReads reads() {
    return reads;
  }

  /**
   * The change stream of {@code filter}, opened (or reopened for a changed spec) now; null when it
   * has no {@code spec.changes} (a stream it had is closed).
   *
   * @throws StreamException of kind REFUSED when the namespace, or the operator, has all the
   *     streams it may have open
   */
  public synchronized FilterChanges of(BloomFilter filter, KeyType keyType) throws StreamException {
    return of(filter, keyType, null);
  }

  /** {@link #of(BloomFilter, KeyType)}, reading the filter's Secrets through {@code secrets}. */
  public synchronized FilterChanges of(BloomFilter filter, KeyType keyType, SecretAccess secrets)
      throws StreamException {
    String uid = filter.getMetadata().getUid();
    ChangesSpec spec = filter.getSpec().getChanges();
    if (spec == null) {
      close(uid);
      return null;
    }
    // A PostgreSQL stream connects with the source's settings: a new URL or Secret is a new stream.
    String specText =
        Serialization.asJson(spec)
            + "|"
            + keyType
            + (spec.getPostgresLogical() == null
                ? ""
                : "|" + Serialization.asJson(filter.getSpec().getSource()));
    Open open = byUid.get(uid);
    if (open != null && !open.specText().equals(specText)) {
      close(uid);
      open = null;
    }
    String namespace = filter.getMetadata().getNamespace();
    if (open == null) {
      long inNamespace =
          byUid.values().stream().filter(o -> o.namespace().equals(namespace)).count();
      if (inNamespace >= limits.streamsPerNamespace()) {
        throw new StreamException(
            StreamException.Kind.REFUSED,
            "the namespace has "
                + inNamespace
                + " change streams open, its share (BLOOM_STREAMS_PER_NAMESPACE)");
      }
      if (byUid.size() >= limits.streams()) {
        throw new StreamException(
            StreamException.Kind.REFUSED,
            "the operator has " + byUid.size() + " change streams open (BLOOM_MAX_STREAMS)");
      }
      String clientId = "bloom-operator-" + namespace + "-" + filter.getMetadata().getName();
      open = new Open(namespace, specText, opener.open(filter, keyType, clientId, secrets));
      byUid.put(uid, open);
    }
    return new FilterChanges(spec, open.stream(), uid, namespace, reads);
  }

  /** The stream open for the filter {@code uid}, if any. */
  public synchronized java.util.Optional<ChangeStream> stream(String uid) {
    Open open = byUid.get(uid);
    return open == null ? java.util.Optional.empty() : java.util.Optional.of(open.stream());
  }

  /** Closes the stream of the filter {@code uid}, if one is open (the filter was deleted). */
  public synchronized void close(String uid) {
    // A new spec (or a new filter of the uid) starts without the old one's backoff.
    reads.backoff().forget(uid);
    Open open = byUid.remove(Objects.requireNonNull(uid));
    if (open != null) {
      open.stream().close();
    }
  }

  /** Streams open now. */
  public synchronized int open() {
    return byUid.size();
  }

  @Override
  public synchronized void close() {
    byUid.values().forEach(o -> o.stream().close());
    byUid.clear();
  }
}
