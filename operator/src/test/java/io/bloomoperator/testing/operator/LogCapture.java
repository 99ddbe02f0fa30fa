package io.bloomoperator.testing.operator;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.LoggerFactory;

/**
 * Everything logged in the test JVM (at the levels logback-test.xml lets through) while attached to
 * the root logger: for tests asserting what the operator does or does not write to its log. Either
 * for one test class ({@code @RegisterExtension static final LogCapture LOGS = new LogCapture();},
 * ordered before an {@link InProcessOperator} to see its start) or for a block ({@code try
 * (LogCapture logs = LogCapture.attach()) { ... }}).
 */
public final class LogCapture implements AutoCloseable, BeforeAllCallback, AfterAllCallback {

  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

  /** Captures from now until {@link #close()}. */
  public static LogCapture attach() {
    LogCapture capture = new LogCapture();
    capture.start();
    return capture;
  }

  /** The events logged so far, oldest first (a copy: logging goes on on other threads). */
  public List<ILoggingEvent> events() {
    // AppenderBase.doAppend holds the appender's lock while it adds to the list.
    synchronized (appender) {
      return List.copyOf(appender.list);
    }
  }

  @Override
  public void close() {
    root().detachAppender(appender);
    appender.stop();
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    start();
  }

  @Override
  public void afterAll(ExtensionContext context) {
    close();
  }

  private void start() {
    Logger root = root();
    appender.setContext(root.getLoggerContext());
    appender.start();
    root.addAppender(appender);
  }

  private static Logger root() {
    return (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
  }
}
