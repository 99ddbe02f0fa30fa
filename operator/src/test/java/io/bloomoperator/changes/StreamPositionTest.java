package io.bloomoperator.changes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class StreamPositionTest {

  @Test
  void theTextFormReadsBackTheSamePosition() {
    StreamPosition p = StreamPosition.start().with(1, 87).with(0, 120);
    assertThat(p.text()).isEqualTo("0:120,1:87");
    assertThat(StreamPosition.parse(p.text())).isEqualTo(p);
    assertThat(StreamPosition.parse("")).isEqualTo(StreamPosition.start());
    assertThat(p.of(5)).isEqualTo(-1);
  }

  @Test
  void eventsSinceCountsEveryPartitionFromWhereItWas() {
    StreamPosition before = StreamPosition.parse("0:10,1:5");
    StreamPosition after = StreamPosition.parse("0:15,1:5,2:3");
    assertThat(after.eventsSince(before)).isEqualTo(8);
  }

  @Test
  void anythingElseReadBackFromTheClusterIsRefused() {
    for (String text :
        List.of("0:1,", "a:1", "0:-1", "0:1,0:2", "0:", ":1", "0:１", "0:99999999999999999999")) {
      assertThatThrownBy(() -> StreamPosition.parse(text))
          .as(text)
          .isInstanceOf(IllegalArgumentException.class);
    }
    StringBuilder many = new StringBuilder();
    for (int i = 0; i <= StreamPosition.MAX_PARTITIONS; i++) {
      many.append(i == 0 ? "" : ",").append(i).append(":0");
    }
    assertThatThrownBy(() -> StreamPosition.parse(many.toString()))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
