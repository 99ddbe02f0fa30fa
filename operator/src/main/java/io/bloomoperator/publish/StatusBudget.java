package io.bloomoperator.publish;

import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.CharacterEscapes;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.databind.ObjectWriter;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Charges the operator's status writes of a BloomFilter to the {@link WriteBudget} of the filter
 * and its namespace at the size of the whole stored object: the API server stores the whole object
 * for every patch, however small the patch, and the tenant decides that size ({@code
 * spec.source.inline}, annotations). Without it, a tenant's 1 KB Lease edits made the operator
 * rewrite 1 MB objects every few seconds, outside any budget.
 *
 * <p>Two kinds of writes:
 *
 * <ul>
 *   <li><b>Deferrable</b> ({@link #deferrable}: reader counts, build progress): charged before they
 *       are sent, at the object as last seen plus {@link WriteBudget.Limits#OBJECT_OVERHEAD_BYTES};
 *       when refused the caller skips the write and tries again later with what it holds in memory.
 *       Together they may use at most {@link #SHARE_DIVISOR 1/4} of the namespace's and of the
 *       filter's hourly budget, and one filter's are spaced at least {@code objectBytes / (that
 *       share of the smaller of the two hourly limits)} apart: they spread over the hour and leave
 *       the rest of the budget to publishes.
 *   <li><b>Outcomes</b> ({@link #written}: conditions, publish results, the record of a build's
 *       start): always written, since they report what happened (a budget refusal included), and
 *       charged afterwards at the size of the object the API server answered, when it stored a new
 *       revision (an identical patch stores nothing). Deferrable writes and publishes yield to
 *       them.
 * </ul>
 *
 * <p>Memory: the spacing keeps one instant per filter that wrote in the last spacing period.
 */
public final class StatusBudget {

  /** Deferrable writes get one quarter of each hourly budget. */
  public static final int SHARE_DIVISOR = 4;

  private static final Duration HOUR = Duration.ofHours(1);
  private static final Duration PRUNE_EVERY = Duration.ofMinutes(1);
  private static final ObjectWriter JSON =
      Serialization.jsonMapper().writer().with(new ApiServerEscapes());

  private final WriteBudget budget;

  /** The share of deferrable writes, kept in windows of its own. */
  private final WriteBudget share;

  /** Per "namespace/name": the earliest next deferrable write. */
  private final Map<String, Instant> notBefore = new HashMap<>();

  private Instant pruned = Instant.EPOCH;

  /** Charges {@code budget}, the operator's one write budget, which publishes are charged to. */
  public StatusBudget(WriteBudget budget) {
    this.budget = budget;
    WriteBudget.Limits limits = budget.limits();
    this.share =
        new WriteBudget(
            new WriteBudget.Limits(
                Math.max(1, limits.namespaceBytesPerHour() / SHARE_DIVISOR),
                Math.max(1, limits.filterBytesPerHour() / SHARE_DIVISOR),
                limits.maxChunksPerVersion()));
  }

  /**
   * Whether a deferrable status write of {@code filter} may be sent now; if so it is charged.
   *
   * @param filter the filter as last seen (its size is what the write will store)
   * @return false: skip the write, the budget or the spacing has no room for it now
   */
  public synchronized boolean deferrable(HasMetadata filter, Instant now) {
    prune(now);
    String namespace = filter.getMetadata().getNamespace();
    String name = filter.getMetadata().getName();
    String key = namespace + "/" + name;
    Instant next = notBefore.get(key);
    if (next != null && now.isBefore(next)) {
      return false;
    }
    long bytes = storedBytes(filter);
    Optional<WriteBudget.Refusal> refused =
        share
            .fits(namespace, name, bytes, now)
            .or(() -> budget.charge(namespace, name, bytes, now));
    if (refused.isPresent()) {
      // A write larger than the whole share never fits: look again in an hour, not every round.
      Instant fits = refused.get().fitsAt();
      notBefore.put(key, fits == null ? now.plus(HOUR) : fits);
      return false;
    }
    share.charge(namespace, name, bytes, now);
    notBefore.put(key, now.plus(spacing(bytes)));
    return true;
  }

  /**
   * Charges a status write that was made: {@code answer}, as the API server answered it, if it is a
   * new revision of {@code before} (the object the write was based on).
   */
  public void written(HasMetadata before, HasMetadata answer, Instant now) {
    if (answer == null
        || Objects.equals(
            before.getMetadata().getResourceVersion(), answer.getMetadata().getResourceVersion())) {
      return;
    }
    budget.record(
        answer.getMetadata().getNamespace(),
        answer.getMetadata().getName(),
        storedBytes(answer),
        now);
  }

  /**
   * What etcd stores for {@code object}, for the write budget: its JSON as the API server encodes
   * it (which escapes {@code <}, {@code >}, {@code &} and control characters as 6 bytes each), plus
   * {@link WriteBudget.Limits#OBJECT_OVERHEAD_BYTES}.
   */
  public static long storedBytes(HasMetadata object) {
    Counting counted = new Counting();
    try {
      JSON.writeValue(counted, object);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return WriteBudget.Limits.cost(counted.bytes, 1);
  }

  /** The least time between two deferrable writes of one filter whose object has {@code bytes}. */
  Duration spacing(long bytes) {
    WriteBudget.Limits limits = budget.limits();
    long perHour =
        Math.max(
            1,
            Math.min(limits.namespaceBytesPerHour(), limits.filterBytesPerHour()) / SHARE_DIVISOR);
    return Duration.ofMillis(Math.multiplyExact(bytes, HOUR.toMillis()) / perHour);
  }

  private void prune(Instant now) {
    if (now.isBefore(pruned.plus(PRUNE_EVERY))) {
      return;
    }
    pruned = now;
    notBefore.values().removeIf(next -> !now.isBefore(next));
  }

  /** Counts what is written to it, keeping nothing. */
  private static final class Counting extends OutputStream {
    private long bytes;

    @Override
    public void write(int b) {
      bytes++;
    }

    @Override
    public void write(byte[] b, int off, int len) {
      bytes += len;
    }
  }

  /**
   * The escapes of Go's encoding/json, which the API server encodes objects with: {@code <}, {@code
   * >}, {@code &}, U+2028 and U+2029 as {@code \}{@code uXXXX}, on top of JSON's own.
   */
  private static final class ApiServerEscapes extends CharacterEscapes {
    private static final int[] ASCII = standardAsciiEscapesForJSON();
    private static final SerializedString LINE_SEPARATOR = new SerializedString("\\u2028");
    private static final SerializedString PARAGRAPH_SEPARATOR = new SerializedString("\\u2029");

    static {
      ASCII['<'] = ESCAPE_STANDARD;
      ASCII['>'] = ESCAPE_STANDARD;
      ASCII['&'] = ESCAPE_STANDARD;
    }

    @Override
    public int[] getEscapeCodesForAscii() {
      return ASCII;
    }

    @Override
    public SerializableString getEscapeSequence(int ch) {
      return switch (ch) {
        case 0x2028 -> LINE_SEPARATOR;
        case 0x2029 -> PARAGRAPH_SEPARATOR;
        default -> null;
      };
    }
  }
}
