package io.bloomoperator.changes;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.ChangesSpec;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.source.EgressPolicy;
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

  /** Opens a stream; the Kafka one in production, others in tests. */
  @FunctionalInterface
  public interface Opener {
    ChangeStream open(ChangesSpec spec, KeyType keyType, String clientId) throws StreamException;
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
        (spec, keyType, clientId) ->
            new KafkaChangeStream(spec.getKafka(), keyType, limits, egress, clientId));
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
    String uid = filter.getMetadata().getUid();
    ChangesSpec spec = filter.getSpec().getChanges();
    if (spec == null) {
      close(uid);
      return null;
    }
    String specText = Serialization.asJson(spec) + "|" + keyType;
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
      open = new Open(namespace, specText, opener.open(spec, keyType, clientId));
      byUid.put(uid, open);
    }
    return new FilterChanges(spec, open.stream(), uid, namespace, reads);
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
