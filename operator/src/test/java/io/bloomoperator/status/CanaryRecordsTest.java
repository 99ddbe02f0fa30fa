package io.bloomoperator.status;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.CanaryStatus;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import org.junit.jupiter.api.Test;

/**
 * The canary record a reconcile starts from: what this process wrote last, unless the status it is
 * handed reports a newer canary (written by another replica).
 */
class CanaryRecordsTest {

  private static BloomFilter filter() {
    BloomFilter filter = new BloomFilter();
    filter.setMetadata(new ObjectMetaBuilder().withName("ids").withUid("uid-1").build());
    return filter;
  }

  private static CanaryStatus record(long version, String state) {
    CanaryStatus record = new CanaryStatus();
    record.setVersion(version);
    record.setState(state);
    return record;
  }

  @Test
  void aCachedStatusThatDoesNotShowTheCanaryYetIsOverruledByWhatThisProcessWrote() {
    CanaryRecords records = new CanaryRecords();
    BloomFilter filter = filter();
    assertThat(records.resolve(filter, null)).isNull();
    records.wrote(filter, record(2, CanaryStatus.RUNNING));
    assertThat(records.resolve(filter, null).getVersion()).isEqualTo(2);
    assertThat(records.resolve(filter, null).getState()).isEqualTo(CanaryStatus.RUNNING);
  }

  @Test
  void aRemovedRecordStaysRemovedButANewerCanaryInTheStatusWins() {
    CanaryRecords records = new CanaryRecords();
    BloomFilter filter = filter();
    records.wrote(filter, record(2, CanaryStatus.RUNNING));
    records.wrote(filter, null); // promoted
    assertThat(records.resolve(filter, record(2, CanaryStatus.RUNNING))).isNull();
    assertThat(records.resolve(filter, record(5, CanaryStatus.RUNNING)).getVersion()).isEqualTo(5);
  }
}
