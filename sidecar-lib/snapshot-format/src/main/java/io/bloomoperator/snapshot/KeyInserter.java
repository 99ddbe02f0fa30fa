package io.bloomoperator.snapshot;

/**
 * Adds keys to a filter under construction, whatever its layout: the seam between a build's parsing
 * (which finds keys in a source) and the layout that hashes them and sets their bits. Whether an
 * instance may be used by several threads at once is stated where it is obtained.
 *
 * <p>A key given as UTF-8 bytes sets exactly the bits its {@code String} would: both layouts hash a
 * string key's UTF-8 encoding, so a caller that holds valid UTF-8 need not decode it.
 */
public interface KeyInserter {

  /**
   * Adds a string key.
   *
   * @return true if a bit changed (the key was definitely absent before)
   */
  boolean putString(String key);

  /**
   * Adds the string key whose UTF-8 encoding is {@code utf8[offset, offset + length)}; the bytes
   * must be valid UTF-8 (the caller checks), else the bits are not those of any {@code String}.
   *
   * @return true if a bit changed
   */
  boolean putUtf8(byte[] utf8, int offset, int length);

  /**
   * Adds a long key.
   *
   * @return true if a bit changed
   */
  boolean putLong(long key);
}
