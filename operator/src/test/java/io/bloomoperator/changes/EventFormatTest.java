package io.bloomoperator.changes;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.KafkaChangesSpec;
import io.bloomoperator.changes.EventFormat.Event;
import io.bloomoperator.snapshot.KeyType;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class EventFormatTest {

  private static EventFormat text(KeyType type) {
    KafkaChangesSpec spec = new KafkaChangesSpec();
    return new EventFormat(spec, type, 64);
  }

  private static EventFormat json() {
    KafkaChangesSpec spec = new KafkaChangesSpec();
    spec.setValue(KafkaChangesSpec.ValueFormat.Json);
    spec.setKeyField("id");
    spec.setOperationField("op");
    spec.setDeleteOperations(List.of("delete", "d"));
    return new EventFormat(spec, KeyType.STRING, 256);
  }

  private static Event read(EventFormat format, String value) {
    return format.read(value.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void aTextValueIsTheKeyAsATextSourceReadsIt() {
    // Stripped like a line of a text source: the full build and the stream add the same key.
    assertThat(read(text(KeyType.STRING), " sku-1\n")).isEqualTo(new Event.Add("sku-1"));
    assertThat(read(text(KeyType.STRING), "  \n")).isEqualTo(EventFormat.MALFORMED);
    assertThat(read(text(KeyType.LONG), "-42")).isEqualTo(new Event.Add("-42"));
  }

  @Test
  void whatIsNotAKeyIsMalformed() {
    EventFormat longs = text(KeyType.LONG);
    assertThat(read(longs, "12a")).isEqualTo(EventFormat.MALFORMED);
    assertThat(read(longs, "99999999999999999999")).isEqualTo(EventFormat.MALFORMED);
    assertThat(longs.read(null)).isEqualTo(EventFormat.MALFORMED); // a tombstone
    assertThat(longs.read(new byte[0])).isEqualTo(EventFormat.MALFORMED);
    assertThat(text(KeyType.STRING).read(new byte[] {(byte) 0xc3, 0x28}))
        .isEqualTo(EventFormat.MALFORMED);
    assertThat(read(text(KeyType.STRING), "x".repeat(65))).isEqualTo(EventFormat.MALFORMED);
  }

  @Test
  void jsonCarriesTheKeyAndTheOperation() {
    EventFormat json = json();
    assertThat(read(json, "{\"id\":\"sku-1\",\"price\":{\"eur\":[1,2]}}"))
        .isEqualTo(new Event.Add("sku-1"));
    assertThat(read(json, "{\"op\":\"insert\",\"id\":17}")).isEqualTo(new Event.Add("17"));
    assertThat(read(json, "{\"id\":\"sku-1\",\"op\":\"d\"}")).isEqualTo(new Event.Delete("sku-1"));
  }

  @Test
  void jsonThatIsNotOneEventIsMalformed() {
    EventFormat json = json();
    for (String value :
        List.of(
            "[\"sku-1\"]",
            "{\"sku\":\"x\"}",
            "{\"id\":\"a\",\"id\":\"b\"}",
            "{\"id\":{\"nested\":1}}",
            "{\"id\":\"a\"} {\"id\":\"b\"}",
            "{\"id\":\"a\"",
            "{\"id\":\"a\",\"op\":7}",
            "{\"id\":\"a\",\"x\":" + "[".repeat(40) + "]".repeat(40) + "}")) {
      assertThat(read(json, value)).as(value).isEqualTo(EventFormat.MALFORMED);
    }
  }
}
