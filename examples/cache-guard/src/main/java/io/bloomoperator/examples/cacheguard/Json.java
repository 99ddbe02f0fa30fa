package io.bloomoperator.examples.cacheguard;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

/** The one JSON mapper of the service (Jackson's mappers are thread-safe once configured). */
final class Json {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private Json() {}

  /** Serializes a record, map or scalar; our own types always serialize. */
  static String write(Object value) {
    try {
      return MAPPER.writeValueAsString(value);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot serialize " + value.getClass().getName(), e);
    }
  }
}
