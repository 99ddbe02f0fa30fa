package io.bloomoperator.changes;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import io.bloomoperator.api.KafkaChangesSpec;
import io.bloomoperator.snapshot.KeyType;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;

/**
 * Reads one event's key and operation from a record value, as {@code spec.changes.kafka} describes
 * it. A value is the author's (or a topic writer's) bytes: it is bounded before it is parsed, JSON
 * is read as a stream with a small nesting bound, and nothing of it is ever put into a message.
 */
public final class EventFormat {

  /** What one record is. */
  public sealed interface Event {
    /** The key to add (text; a Long key's decimal digits). */
    record Add(String key) implements Event {}

    /** The key to delete. */
    record Delete(String key) implements Event {}

    /** Not an event of this format: counted, never shown. */
    record Malformed() implements Event {}
  }

  static final Event MALFORMED = new Event.Malformed();

  /** Deep JSON cannot take stack or time: a key is a top-level field. */
  private static final int MAX_JSON_DEPTH = 16;

  private static final JsonFactory JSON =
      JsonFactory.builder()
          .streamReadConstraints(
              StreamReadConstraints.builder()
                  .maxNestingDepth(MAX_JSON_DEPTH)
                  .maxNumberLength(64)
                  .build())
          .build();

  private final KafkaChangesSpec.ValueFormat value;
  private final String keyField;
  private final String operationField;
  private final Set<String> deletes;
  private final KeyType keyType;
  private final int maxEventBytes;

  EventFormat(KafkaChangesSpec spec, KeyType keyType, int maxEventBytes) {
    this.value = spec.getValue() == null ? KafkaChangesSpec.ValueFormat.Text : spec.getValue();
    this.keyField = spec.getKeyField();
    this.operationField = spec.getOperationField();
    List<String> ops = spec.getDeleteOperations();
    this.deletes = Set.copyOf(ops == null || ops.isEmpty() ? List.of("delete") : ops);
    this.keyType = keyType;
    this.maxEventBytes = maxEventBytes;
    if (value == KafkaChangesSpec.ValueFormat.Json && keyField == null) {
      throw new IllegalArgumentException("spec.changes.kafka.keyField is required with value Json");
    }
  }

  /** The event {@code bytes} (a record value, null for a tombstone) holds. */
  public Event read(byte[] bytes) {
    if (bytes == null || bytes.length == 0 || bytes.length > maxEventBytes) {
      return MALFORMED;
    }
    if (value == KafkaChangesSpec.ValueFormat.Text) {
      // The rule of every text source (LineParser): a line's key is its text stripped, so the
      // stream adds exactly the key a full build would read from the same text.
      String key = utf8(bytes);
      return key == null ? MALFORMED : add(key.strip());
    }
    try (JsonParser json = JSON.createParser(bytes)) {
      if (json.nextToken() != JsonToken.START_OBJECT) {
        return MALFORMED;
      }
      String key = null;
      String operation = null;
      for (JsonToken token = json.nextToken();
          token == JsonToken.FIELD_NAME;
          token = json.nextToken()) {
        String field = json.currentName();
        JsonToken next = json.nextToken();
        if (field.equals(keyField)) {
          if (key != null
              || !(next == JsonToken.VALUE_STRING || next == JsonToken.VALUE_NUMBER_INT)) {
            return MALFORMED;
          }
          key = json.getText();
        } else if (field.equals(operationField)) {
          if (operation != null || next != JsonToken.VALUE_STRING) {
            return MALFORMED;
          }
          operation = json.getText();
        } else {
          json.skipChildren();
        }
      }
      if (json.currentToken() != JsonToken.END_OBJECT || json.nextToken() != null || key == null) {
        return MALFORMED;
      }
      if (operation != null && deletes.contains(operation)) {
        return valid(key) ? new Event.Delete(key) : MALFORMED;
      }
      return add(key);
    } catch (IOException | RuntimeException e) {
      return MALFORMED;
    }
  }

  private Event add(String key) {
    return valid(key) ? new Event.Add(key) : MALFORMED;
  }

  private boolean valid(String key) {
    if (key.isEmpty()) {
      return false;
    }
    if (keyType != KeyType.LONG) {
      return true;
    }
    // The bulk source's rule for Long keys (Long.parseLong), so both read an ID alike.
    if (key.length() > 20) {
      return false;
    }
    try {
      Long.parseLong(key);
      return true;
    } catch (NumberFormatException e) {
      return false;
    }
  }

  private static String utf8(byte[] bytes) {
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      return null;
    }
  }
}
