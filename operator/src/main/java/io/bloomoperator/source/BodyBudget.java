package io.bloomoperator.source;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes the bodies of one read may take together after decompression: one body's, or every
 * URL's of a list, counted as they are read on any number of threads, so a list of URLs cannot
 * multiply the operator's bound. Checked by {@link BoundedInputStream} before more is read than one
 * byte past it.
 */
final class BodyBudget {

  private final long limit;
  private final String setting;
  private final int bodies;
  private final AtomicLong used = new AtomicLong();

  /**
   * @param setting the environment variable that sets {@code limit}, for the message
   * @param bodies how many bodies share it, for the message
   */
  BodyBudget(long limit, String setting, int bodies) {
    this.limit = limit;
    this.setting = setting;
    this.bodies = bodies;
  }

  /** Bytes left, negative once another body has read past the limit. */
  long left() {
    return limit - used.get();
  }

  /**
   * Counts {@code n} bytes read.
   *
   * @throws BodyLimitExceeded when the bodies have now taken more than the limit
   */
  void take(long n) throws BodyLimitExceeded {
    if (used.addAndGet(n) > limit) {
      throw new BodyLimitExceeded(
          bodies == 1
              ? "the body is larger than " + limit + " bytes after decompression"
              : "the bodies of the "
                  + bodies
                  + " URLs are larger than "
                  + limit
                  + " bytes together after decompression",
          setting);
    }
  }
}
