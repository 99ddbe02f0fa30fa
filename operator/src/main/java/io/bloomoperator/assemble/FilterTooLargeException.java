package io.bloomoperator.assemble;

/**
 * No acceptable filter fits the limits: the operator's snapshot size limit or Guava's format.
 * Raised before the bit array is allocated, so an oversized request costs no memory.
 */
public class FilterTooLargeException extends Exception {

  public FilterTooLargeException(String message) {
    super(message);
  }
}
