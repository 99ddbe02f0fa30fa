package io.bloomoperator.changes;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator's own record, on the pod's disk, of the replication slot it is about to create for
 * one filter. A slot is created before the status can record it; an operator killed in between
 * found, after its restart, a slot of that name that nothing recorded and refused it as another
 * application's, so the stream stayed down until someone dropped the slot by hand. The record is
 * written (and forced to disk) before the creation, so the restarted operator knows the slot as the
 * one it created. The directory is the pod's own ({@code BLOOM_STREAM_DIR}, an {@code emptyDir}
 * that survives a container restart, not a new pod): whoever can edit the BloomFilter or its status
 * cannot write there. Cleared when the slot is dropped, or when its creation finds a slot of that
 * name already there.
 */
final class SlotIntent {

  private static final Logger LOG = LoggerFactory.getLogger(SlotIntent.class);

  /** Records nothing: the status alone says which slot is the filter's. */
  static final SlotIntent NONE = new SlotIntent(null);

  /** A record holds one slot identity ({@code <system id>/<database>/<slot>}): far below this. */
  private static final int MAX_BYTES = 1024;

  /** Kubernetes uids; anything else would name a file outside the directory. */
  private static final Pattern UID = Pattern.compile("[0-9a-zA-Z-]{1,64}");

  private final Path file;

  private SlotIntent(Path file) {
    this.file = file;
  }

  /** The record of the filter {@code uid} in {@code dir}; {@link #NONE} without a directory. */
  static SlotIntent of(Path dir, String uid) {
    if (dir == null || uid == null || !UID.matcher(uid).matches()) {
      return NONE;
    }
    return new SlotIntent(dir.resolve(uid + ".slot"));
  }

  /** The slot identity recorded, if any. */
  Optional<String> read() {
    if (file == null || !Files.isRegularFile(file)) {
      return Optional.empty();
    }
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      if (channel.size() > MAX_BYTES) {
        return Optional.empty();
      }
      ByteBuffer bytes = ByteBuffer.allocate((int) channel.size());
      while (bytes.hasRemaining() && channel.read(bytes) >= 0) {
        // until full or the end
      }
      String identity = new String(bytes.array(), 0, bytes.position(), StandardCharsets.UTF_8);
      return identity.isBlank() ? Optional.empty() : Optional.of(identity.strip());
    } catch (IOException e) {
      LOG.warn(
          "the record of an operator-created replication slot cannot be read: {}", e.toString());
      return Optional.empty();
    }
  }

  /**
   * Records {@code identity} before the slot is created: written beside, forced to disk, then moved
   * into place, so a kill leaves either no record or a whole one. A record that cannot be written
   * leaves the slot to the status alone, as without a directory (logged).
   */
  void write(String identity) {
    if (file == null) {
      return;
    }
    Path temporary = file.resolveSibling(file.getFileName() + ".tmp");
    try {
      Files.createDirectories(file.getParent());
      try (FileChannel channel =
          FileChannel.open(
              temporary,
              StandardOpenOption.CREATE,
              StandardOpenOption.TRUNCATE_EXISTING,
              StandardOpenOption.WRITE)) {
        ByteBuffer bytes = ByteBuffer.wrap(identity.getBytes(StandardCharsets.UTF_8));
        while (bytes.hasRemaining()) {
          channel.write(bytes);
        }
        channel.force(true);
      }
      Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      LOG.warn(
          "the replication slot about to be created cannot be recorded on the operator's disk"
              + " ({}); if the operator stops before the status records it, it is refused later",
          e.toString());
    }
  }

  /** Forgets the record. */
  void clear() {
    if (file == null) {
      return;
    }
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      LOG.warn("the record of a dropped replication slot cannot be removed: {}", e.toString());
    }
  }
}
