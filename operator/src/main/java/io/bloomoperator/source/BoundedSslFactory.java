package io.bloomoperator.source;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.util.List;
import java.util.Properties;
import java.util.function.BiFunction;
import javax.net.ssl.HandshakeCompletedListener;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import org.postgresql.ssl.DefaultJavaSSLFactory;
import org.postgresql.ssl.NonValidatingFactory;

/**
 * The TLS socket factory of PostgreSQL replication connections ({@code sslfactory}): the factory
 * the source's {@code sslmode} chooses ({@link JdbcDriver#POSTGRESQL}), with every message read
 * above TLS bounded by {@link PgFrameBound}, as the plain-text stream is below it. PgJDBC creates
 * it by reflection with its connection properties, which carry the bound ({@link #LIMIT}) and the
 * verifying choice ({@link #VERIFY}); neither is a URL parameter a user may set ({@link JdbcUrl}).
 */
public final class BoundedSslFactory extends SSLSocketFactory {

  static final String LIMIT = "bloomFrameLimit";
  static final String VERIFY = "bloomVerify";

  private final SSLSocketFactory delegate;
  private final long limit;

  /** Called by PgJDBC, by reflection, with the connection's properties. */
  public BoundedSslFactory(Properties info) throws Exception {
    this.limit = Long.parseLong(info.getProperty(LIMIT));
    this.delegate =
        "true".equals(info.getProperty(VERIFY))
            ? new DefaultJavaSSLFactory(info)
            : new NonValidatingFactory(null);
  }

  @Override
  public Socket createSocket(Socket socket, String host, int port, boolean autoClose)
      throws IOException {
    return new Bounded((SSLSocket) delegate.createSocket(socket, host, port, autoClose), limit);
  }

  @Override
  public String[] getDefaultCipherSuites() {
    return delegate.getDefaultCipherSuites();
  }

  @Override
  public String[] getSupportedCipherSuites() {
    return delegate.getSupportedCipherSuites();
  }

  @Override
  public Socket createSocket(String host, int port) throws IOException {
    throw new SocketException("only layered over the operator's guarded socket");
  }

  @Override
  public Socket createSocket(String host, int port, InetAddress local, int localPort)
      throws IOException {
    throw new SocketException("only layered over the operator's guarded socket");
  }

  @Override
  public Socket createSocket(InetAddress host, int port) throws IOException {
    throw new SocketException("only layered over the operator's guarded socket");
  }

  @Override
  public Socket createSocket(InetAddress host, int port, InetAddress local, int localPort)
      throws IOException {
    throw new SocketException("only layered over the operator's guarded socket");
  }

  /** A TLS socket whose decrypted input is bounded per message; everything else is the socket's. */
  private static final class Bounded extends SSLSocket {
    private final SSLSocket socket;
    private final long limit;
    private InputStream input;

    Bounded(SSLSocket socket, long limit) {
      this.socket = socket;
      this.limit = limit;
    }

    @Override
    public synchronized InputStream getInputStream() throws IOException {
      if (input == null) {
        input = new PgFrameBound(socket.getInputStream(), limit, false);
      }
      return input;
    }

    @Override
    public OutputStream getOutputStream() throws IOException {
      return socket.getOutputStream();
    }

    @Override
    public void connect(SocketAddress endpoint, int timeout) throws IOException {
      throw new SocketException("already connected");
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }

    @Override
    public boolean isClosed() {
      return socket.isClosed();
    }

    @Override
    public boolean isConnected() {
      return socket.isConnected();
    }

    @Override
    public boolean isInputShutdown() {
      return socket.isInputShutdown();
    }

    @Override
    public boolean isOutputShutdown() {
      return socket.isOutputShutdown();
    }

    @Override
    public void shutdownInput() throws IOException {
      socket.shutdownInput();
    }

    @Override
    public void shutdownOutput() throws IOException {
      socket.shutdownOutput();
    }

    @Override
    public InetAddress getInetAddress() {
      return socket.getInetAddress();
    }

    @Override
    public InetAddress getLocalAddress() {
      return socket.getLocalAddress();
    }

    @Override
    public int getPort() {
      return socket.getPort();
    }

    @Override
    public int getLocalPort() {
      return socket.getLocalPort();
    }

    @Override
    public SocketAddress getRemoteSocketAddress() {
      return socket.getRemoteSocketAddress();
    }

    @Override
    public SocketAddress getLocalSocketAddress() {
      return socket.getLocalSocketAddress();
    }

    @Override
    public void setSoTimeout(int timeout) throws SocketException {
      socket.setSoTimeout(timeout);
    }

    @Override
    public int getSoTimeout() throws SocketException {
      return socket.getSoTimeout();
    }

    @Override
    public void setTcpNoDelay(boolean on) throws SocketException {
      socket.setTcpNoDelay(on);
    }

    @Override
    public boolean getTcpNoDelay() throws SocketException {
      return socket.getTcpNoDelay();
    }

    @Override
    public void setKeepAlive(boolean on) throws SocketException {
      socket.setKeepAlive(on);
    }

    @Override
    public boolean getKeepAlive() throws SocketException {
      return socket.getKeepAlive();
    }

    @Override
    public void setReceiveBufferSize(int size) throws SocketException {
      socket.setReceiveBufferSize(size);
    }

    @Override
    public int getReceiveBufferSize() throws SocketException {
      return socket.getReceiveBufferSize();
    }

    @Override
    public void setSendBufferSize(int size) throws SocketException {
      socket.setSendBufferSize(size);
    }

    @Override
    public int getSendBufferSize() throws SocketException {
      return socket.getSendBufferSize();
    }

    @Override
    public String[] getSupportedCipherSuites() {
      return socket.getSupportedCipherSuites();
    }

    @Override
    public String[] getEnabledCipherSuites() {
      return socket.getEnabledCipherSuites();
    }

    @Override
    public void setEnabledCipherSuites(String[] suites) {
      socket.setEnabledCipherSuites(suites);
    }

    @Override
    public String[] getSupportedProtocols() {
      return socket.getSupportedProtocols();
    }

    @Override
    public String[] getEnabledProtocols() {
      return socket.getEnabledProtocols();
    }

    @Override
    public void setEnabledProtocols(String[] protocols) {
      socket.setEnabledProtocols(protocols);
    }

    @Override
    public SSLSession getSession() {
      return socket.getSession();
    }

    @Override
    public SSLSession getHandshakeSession() {
      return socket.getHandshakeSession();
    }

    @Override
    public SSLParameters getSSLParameters() {
      return socket.getSSLParameters();
    }

    @Override
    public void setSSLParameters(SSLParameters parameters) {
      socket.setSSLParameters(parameters);
    }

    @Override
    public String getApplicationProtocol() {
      return socket.getApplicationProtocol();
    }

    @Override
    public String getHandshakeApplicationProtocol() {
      return socket.getHandshakeApplicationProtocol();
    }

    @Override
    public void setHandshakeApplicationProtocolSelector(
        BiFunction<SSLSocket, List<String>, String> selector) {
      socket.setHandshakeApplicationProtocolSelector(selector);
    }

    @Override
    public void addHandshakeCompletedListener(HandshakeCompletedListener listener) {
      socket.addHandshakeCompletedListener(listener);
    }

    @Override
    public void removeHandshakeCompletedListener(HandshakeCompletedListener listener) {
      socket.removeHandshakeCompletedListener(listener);
    }

    @Override
    public void startHandshake() throws IOException {
      socket.startHandshake();
    }

    @Override
    public void setUseClientMode(boolean mode) {
      socket.setUseClientMode(mode);
    }

    @Override
    public boolean getUseClientMode() {
      return socket.getUseClientMode();
    }

    @Override
    public void setNeedClientAuth(boolean need) {
      socket.setNeedClientAuth(need);
    }

    @Override
    public boolean getNeedClientAuth() {
      return socket.getNeedClientAuth();
    }

    @Override
    public void setWantClientAuth(boolean want) {
      socket.setWantClientAuth(want);
    }

    @Override
    public boolean getWantClientAuth() {
      return socket.getWantClientAuth();
    }

    @Override
    public void setEnableSessionCreation(boolean flag) {
      socket.setEnableSessionCreation(flag);
    }

    @Override
    public boolean getEnableSessionCreation() {
      return socket.getEnableSessionCreation();
    }
  }
}
