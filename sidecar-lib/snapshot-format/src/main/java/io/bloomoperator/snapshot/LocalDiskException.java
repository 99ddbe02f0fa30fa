package io.bloomoperator.snapshot;

import java.io.IOException;

/**
 * A reader could not write or read a snapshot file in its local directory (no space left, the
 * directory missing or not writable, an I/O error): reported with {@link LoadFailureReason#DISK},
 * and the filter being served stays. Its message names the directory's condition, never manifest
 * content.
 */
public final class LocalDiskException extends IOException {

  private static final long serialVersionUID = 1L;

  public LocalDiskException(String message, Throwable cause) {
    super(message, cause);
  }
}
