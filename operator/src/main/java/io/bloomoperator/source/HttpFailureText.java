package io.bloomoperator.source;

import java.io.EOFException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.ProtocolException;
import java.net.UnknownHostException;
import java.util.Optional;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.apache.hc.core5.http.ConnectionClosedException;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.MalformedChunkCodingException;
import org.apache.hc.core5.http.MessageConstraintException;
import org.apache.hc.core5.http.NoHttpResponseException;

/**
 * What an HTTP failure is called in a status message: a fixed description chosen by the exception's
 * type, never the exception's text, which can quote what the server sent.
 */
final class HttpFailureText {

  private HttpFailureText() {}

  /** A fixed description of a failure, e.g. "connection refused". */
  static String of(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof UnknownHostException) {
        return "unknown host";
      }
      if (t instanceof NoRouteToHostException) {
        return "no route to host";
      }
      if (t instanceof ConnectException) {
        return "connection refused (nothing listening, or a firewall rejects it)";
      }
      if (t instanceof SSLPeerUnverifiedException) {
        return "the server's TLS certificate does not match the host";
      }
      if (t instanceof SSLException) {
        return "TLS handshake failed";
      }
      if (t instanceof MessageConstraintException) {
        return "the response's head is longer than the operator reads (16 KiB a line, 100 lines)";
      }
      if (t instanceof ProtocolException
          || t instanceof HttpException
          || t instanceof NoHttpResponseException
          || t instanceof ConnectionClosedException
          || t instanceof MalformedChunkCodingException) {
        return "not a valid HTTP response, or the connection closed before it ended";
      }
      if (t instanceof EOFException) {
        return "the connection closed before the response ended";
      }
    }
    return "I/O error (" + e.getClass().getSimpleName() + ")";
  }

  /** The egress refusal somewhere in the cause chain, if the failure was one. */
  static Optional<EgressPolicy.Refusal> refusalOf(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof EgressCheckedDns.Refused refused) {
        return Optional.of(refused.refusal());
      }
    }
    return Optional.empty();
  }
}
